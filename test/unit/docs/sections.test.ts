/**
 * docs/.vitepress/sections.ts: README sections shown on site pages, rendered by VitePress's own markdown
 * renderer over a throwaway site (a README beside a docs/ folder), as `npm run docs:build` renders them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMarkdownRenderer } from "vitepress";
import { staleCopies, withCopies } from "../../../docs/.vitepress/copies.ts";
import { END, githubSlug, sections } from "../../../docs/.vitepress/sections.ts";

const work = mkdtempSync(join(tmpdir(), "a2a-sections-"));
const docs = join(work, "docs");
mkdirSync(join(docs, "guide"), { recursive: true });
writeFileSync(
	join(work, "README.md"),
	[
		"# proj",
		"Opening with [the protocol](docs/protocol.md#errors) and [a tool](src/x.ts).",
		"## Install",
		"See [Use](#use) and [Install](#install).",
		"### Detail",
		"## Use",
		"| a | b |",
		"|---|---|",
		"| [x](#install) | y |",
		"## Last",
		"[gone](#nowhere)",
	].join("\n"),
);
writeFileSync(join(docs, "protocol.md"), "# Protocol\n## Errors\n");
const pages: Record<string, string> = {
	"index.md": "<!-- @section ../README.md > proj | body -->\n",
	"guide/install.md": "<!-- @section ../../README.md > Install | page -->\n",
	"guide/use.md": "# Use it\n<!-- @section ../../README.md > Use -->\n",
};
for (const [name, text] of Object.entries(pages)) writeFileSync(join(docs, name), text);
for (const name of Object.keys(pages)) pages[name] = withCopies(docs, join(docs, name), pages[name] ?? "");
for (const [name, text] of Object.entries(pages)) writeFileSync(join(docs, name), text);

afterAll(() => rmSync(work, { recursive: true, force: true }));

async function render(name: string, text = pages[name] ?? ""): Promise<string> {
	const md = await createMarkdownRenderer(docs, { config: m => m.use(sections(docs)) });
	return md.render(text, { path: join(docs, name), relativePath: name });
}

describe("githubSlug: the forge's heading ids", () => {
	test.each([
		["Moving files: /blob", "moving-files-blob"],
		["Upload: POST /blob?path=P[&offset=N]", "upload-post-blobpathpoffsetn"],
		["Commands (in the host; output in its notifications)", "commands-in-the-host-output-in-its-notifications"],
		["支持的版本", "支持的版本"],
		["命令（在宿主中；输出显示在其通知中）", "命令在宿主中输出显示在其通知中"],
		["tools/call", "toolscall"],
	])("%s -> %s", (heading, slug) => expect(githubSlug(heading)).toBe(slug));
});

describe("@section", () => {
	test("| body: the opening without its heading; docs/ links become site links, other files plain text", async () => {
		const html = await render("index.md");
		expect(html).not.toContain("<h1");
		expect(html).toContain('href="/protocol.html#errors"');
		expect(html).toContain("a tool");
		expect(html).not.toContain("src/x.ts");
	});

	test("| page: the section is the page (H1, subheadings one level up); its own anchors stay in page", async () => {
		const html = await render("guide/install.md");
		expect(html).toMatch(/<h1 id="install"/);
		expect(html).toMatch(/<h2 id="detail"/);
		expect(html).toContain('href="#install"');
		expect(html).toContain('href="/guide/use.html#use"');
	});

	test("an anchor in a table cell points at the page that shows its section", async () => {
		const html = await render("guide/use.md");
		expect(html).toMatch(/<h2 id="use"/);
		expect(html).toContain('href="/guide/install.html#install"');
	});

	test("a heading no section starts with fails, naming it and the file", async () => {
		await expect(render("guide/x.md", `<!-- @section ../../README.md > Nope -->\n${END}\n`)).rejects.toThrow(
			/no heading starting with 'Nope' in .*README\.md/,
		);
	});

	test("an anchor no page shows fails, naming the link", async () => {
		await expect(render("guide/x.md", `<!-- @section ../../README.md > Last -->\n${END}\n`)).rejects.toThrow(
			/link '#nowhere' in .*README\.md: no page shows anchor #nowhere/,
		);
	});

	test("a missing file fails", async () => {
		await expect(render("guide/x.md", `<!-- @section ../../NOPE.md > X -->\n${END}\n`)).rejects.toThrow(/ENOENT/);
	});
});

describe("the forge's copy under each @section", () => {
	test("the copy is the section with its links rewritten from the page: README anchors to the page showing them", () => {
		const page = pages["guide/use.md"] ?? "";
		expect(page).toContain("| [x](install.md#install) | y |");
		expect(page.endsWith(`${END}\n`)).toBe(true);
		expect(pages["index.md"]).toContain("[the protocol](protocol.md#errors) and [a tool](../src/x.ts)");
		expect(pages["guide/install.md"]).toContain("See [Use](use.md#use) and [Install](#install).");
		expect(pages["guide/install.md"]).toMatch(/^<!-- @section[^\n]*\n# Install\n/);
	});

	test("the site shows the section once, not the copy beside it", async () => {
		const html = await render("guide/use.md");
		expect(html.match(/<h2 id="use"/g)?.length).toBe(1);
		expect(html).not.toContain("@end-section");
	});

	test("writing again changes nothing; an edited copy or README is named stale", () => {
		expect(staleCopies(docs, false)).toEqual([]);
		writeFileSync(join(docs, "guide/use.md"), (pages["guide/use.md"] ?? "").replace("| y |", "| z |"));
		expect(staleCopies(docs, false)).toEqual([join(docs, "guide/use.md")]);
		expect(staleCopies(docs, true)).toEqual([join(docs, "guide/use.md")]);
		expect(staleCopies(docs, false)).toEqual([]);
	});

	test("an @section with no end line fails the site build, naming the page", async () => {
		await expect(render("guide/x.md", "<!-- @section ../../README.md > Use -->\ntext\n")).rejects.toThrow(
			/no copy ending '<!-- @end-section -->'/,
		);
	});
});
