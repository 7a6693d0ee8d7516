/**
 * Every Markdown file read as the forge shows it: parsed by a CommonMark/GFM parser (markdown-it, as VitePress
 * ships it) with no include expansion, so a page that only names another file's section is seen empty. Each
 * page must show text, each relative link must reach a file, and each `#anchor` must be a heading id of its
 * target under GitHub's rules (lower case, punctuation dropped, spaces to `-`, repeats `-1`, CJK kept).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { createMarkdownRenderer, type MarkdownRenderer } from "vitepress";
import { staleCopies } from "../../../docs/.vitepress/copies.ts";
import { githubSlug } from "../../../docs/.vitepress/sections.ts";
import { ROOT } from "../../helpers/host.ts";

/** The site's page template for untranslated reference pages: VitePress fills it, no reader opens it. */
const TEMPLATES = ["docs/zh/[page].md"];

const FILES = [
	"README.md",
	"README_ZN.md",
	...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
		.filter(f => f.endsWith(".md") && !f.startsWith(".vitepress"))
		.map(f => `docs/${f}`),
].filter(f => !TEMPLATES.includes(f));

interface Token {
	type: string;
	tag: string;
	content: string;
	children: Token[] | null;
	attrGet(name: string): string | null;
}

interface Page {
	/** Text a reader sees outside HTML comments and front matter. */
	visible: string;
	anchors: Set<string>;
	links: string[];
}

/** The text GitHub slugs a heading from: inline text and code, link text, no markup. */
const plain = (inline: Token): string =>
	(inline.children ?? [])
		.filter(t => t.type === "text" || t.type === "code_inline")
		.map(t => t.content)
		.join("");

function page(md: MarkdownRenderer, file: string): Page {
	const source = readFileSync(join(ROOT, file), "utf8").replace(/^---\n[\s\S]*?\n---\n/, "");
	const tokens = md.parse(source, {}) as Token[];
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	const links: string[] = [];
	let visible = "";
	tokens.forEach((t, i) => {
		if (t.type === "heading_open") {
			const base = githubSlug(plain(tokens[i + 1] as Token));
			const n = seen.get(base) ?? 0;
			seen.set(base, n + 1);
			anchors.add(n === 0 ? base : `${base}-${n}`);
		}
		if (t.type === "html_block" || t.type === "html_inline")
			for (const m of t.content.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? "");
		if (t.type === "html_block") visible += t.content.replace(/<!--[\s\S]*?-->/g, "").trim();
		if (t.type === "inline" || t.type === "fence" || t.type === "code_block") visible += t.content.trim();
		for (const c of t.children ?? []) {
			if (c.type === "link_open") links.push(c.attrGet("href") ?? "");
			if (c.type === "image") links.push(c.attrGet("src") ?? "");
			if (c.type === "html_inline")
				for (const m of c.content.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? "");
		}
	});
	return { visible, anchors, links };
}

/** A bare markdown-it (the constructor of VitePress's renderer, none of its plugins): tables, raw HTML, no ids. */
const site = await createMarkdownRenderer(join(ROOT, "docs"));
const md = new (site.constructor as new (options: object) => MarkdownRenderer)({ html: true });
const pages = new Map(FILES.map(f => [f, page(md, f)]));

/** What is wrong with `href` written in `file`, or undefined when it resolves on the forge. */
function broken(file: string, href: string): string | undefined {
	if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href)) return undefined;
	const [path = "", hash] = decodeURI(href).split("#", 2);
	const target =
		path === ""
			? file
			: relative(ROOT, path.startsWith("/") ? join(ROOT, path) : resolve(dirname(join(ROOT, file)), path));
	if (target.startsWith("..") || !existsSync(join(ROOT, target))) return `no file ${target}`;
	if (!hash || !target.endsWith(".md")) return undefined;
	const anchors = pages.get(target)?.anchors ?? page(md, target).anchors;
	return anchors.has(hash) ? undefined : `no heading #${hash} in ${target}`;
}

describe("the Markdown as the forge renders it", () => {
	test("the READMEs and docs/ are all read", () => {
		expect(FILES).toContain("docs/guide/blob.md");
		expect(FILES).toContain("docs/zh/guide/troubleshooting.md");
		expect(FILES.length).toBeGreaterThan(30);
	});

	test("each page's copy of a README section is that section now (else: npm run docs:copies)", () => {
		expect(staleCopies(join(ROOT, "docs"), false).map(p => relative(ROOT, p))).toEqual([]);
	});

	// A heading or a title line alone is not a page: every real page here has well over 200 characters.
	test("no page renders empty", () => {
		const empty = FILES.filter(f => (pages.get(f)?.visible.length ?? 0) < 200);
		expect(empty).toEqual([]);
	});

	test("every relative link reaches a file, and every #anchor is a heading of its target", () => {
		const bad = FILES.flatMap(f =>
			(pages.get(f)?.links ?? []).flatMap(href => {
				const why = broken(f, href);
				return why ? [`${f}: (${href}) ${why}`] : [];
			}),
		);
		expect(bad).toEqual([]);
	});
});

describe("the checker itself", () => {
	test("a heading's slug, its repeat, an absent anchor and an absent file", () => {
		const readme = pages.get("README.md");
		expect(readme?.anchors.has("first-call-with-curl")).toBe(true);
		expect(broken("README.md", "#first-call-with-curl")).toBeUndefined();
		expect(broken("README.md", "#no-such-heading")).toContain("no heading");
		expect(broken("README.md", "docs/nope.md")).toContain("no file");
		expect(broken("README.md", "https://example.com/x#y")).toBeUndefined();
	});
});
