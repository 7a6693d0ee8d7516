/**
 * The Chinese docs are whole for every page a user acts on. Every page under docs/guide/ and the reference pages
 * usage, security and protocol have a twin under docs/zh/ with the same structure (headings level by level, code
 * blocks equal but for their comments, table rows, after the README sections are put in place) and no placeholder.
 * The contributor pages (architecture, testing, performance) stay English and say so. README_ZN.md keeps step with README.md the same
 * way, and no Chinese link leads to an English page that has a twin, nor to a heading that is not there.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expandSections, githubSlug } from "../../../docs/.vitepress/sections.ts";
import zhRoutes, { CONTRIBUTOR_PAGES } from "../../../docs/zh/[page].paths.mts";
import { ROOT } from "../../helpers/host.ts";

const DOCS = join(ROOT, "docs");
const PLACEHOLDER = /尚未翻译|本页尚无中文版|\bTODO\b|\bTBD\b|待翻译/;

/** The comments of a fenced block's lines, by the same rules `code` drops them. */
function comments(lang: string, body: string[]): string[] {
	const re = /^(sh|bash|shell|ya?ml|toml|text|)$/.test(lang) ? /(?:^|\s)#(\s.*)$/ : /(?:^|\s)\/\/(\s.*)$/;
	const notes = lang === "" ? body.map(l => /\s{2,}([(（].*[)）])$/.exec(l)?.[1]) : [];
	return [...body.map(l => re.exec(l)?.[1]?.trim()), ...notes].filter((c): c is string => !!c);
}

/** A fenced block's lines without comments (`#`, `//`, and a text block's trailing `(…)` notes) or blank lines. */
function code(lang: string, body: string[]): string {
	const hash = /^(sh|bash|shell|ya?ml|toml|text|)$/.test(lang);
	return body
		.map(l => (hash ? l.replace(/(^|\s)#(\s.*)?$/, "") : l.replace(/(^|\s)\/\/(\s.*)?$/, "")))
		.map(l => (lang === "" ? l.replace(/\s{2,}[(（].*[)）]$/, "") : l).trimEnd())
		.filter(l => l !== "")
		.join("\n");
}

/** A table row with every cell that is not a literal (one code span, a number) blanked: codes and statuses must agree. */
const literalCells = (row: string): string =>
	row
		.replace(/^\s*\||\|\s*$/g, "")
		.split("|")
		.map(c => c.trim())
		.map(c => (/^(`[^`]*`|-?[\d.,]+)$/.test(c) ? c : "…"))
		.join(" | ");

/** What a reader can compare across languages: heading levels in order, code blocks, table rows. */
function shape(text: string) {
	const headings: number[] = [];
	const blocks: string[] = [];
	const notes: string[] = [];
	const rows: string[] = [];
	let fence: { lang: string; body: string[] } | undefined;
	for (const line of text.split("\n")) {
		const open = /^(```|~~~)\s*(\S*)/.exec(line);
		if (open) {
			if (fence) {
				blocks.push(code(fence.lang, fence.body));
				notes.push(...comments(fence.lang, fence.body));
			}
			fence = fence ? undefined : { lang: open[2] ?? "", body: [] };
			continue;
		}
		if (fence) {
			fence.body.push(line);
			continue;
		}
		const h = /^(#{1,6}) /.exec(line);
		if (h?.[1]) headings.push(h[1].length);
		if (/^\|.*\|\s*$/.test(line) && !/^\|[\s:|-]+\|\s*$/.test(line)) rows.push(literalCells(line));
	}
	return { headings, fences: blocks.length, rows, blocks, notes };
}

/** The structure two languages share; the comments are each language's own. */
const same = (text: string) => {
	const { notes: _, ...rest } = shape(text);
	return rest;
};

/** GitHub's anchors of a text's headings, repeated ones numbered. */
function anchors(text: string): string[] {
	const seen = new Map<string, number>();
	let inFence = false;
	const out: string[] = [];
	for (const line of text.split("\n")) {
		if (/^(```|~~~)/.test(line)) inFence = !inFence;
		const h = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (h?.[1] === undefined) continue;
		const base = githubSlug(h[1].replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"));
		const n = seen.get(base) ?? 0;
		seen.set(base, n + 1);
		out.push(n === 0 ? base : `${base}-${n}`);
	}
	return out;
}

const guide = readdirSync(join(DOCS, "guide")).filter(f => f.endsWith(".md"));
const REFERENCE = ["usage.md", "security.md", "protocol.md"];

describe("docs/zh: a twin for every page a user acts on", () => {
	test("the guide has pages, and every one has a Chinese twin", () => {
		expect(guide.length).toBeGreaterThan(10);
		expect(guide.filter(p => !existsSync(join(DOCS, "zh", "guide", p)))).toEqual([]);
		const extra = readdirSync(join(DOCS, "zh", "guide")).filter(f => f.endsWith(".md") && !guide.includes(f));
		expect(extra).toEqual([]);
	});

	test("every English reference page is translated or a contributor page that says it stays English", () => {
		const pages = readdirSync(DOCS).filter(f => f.endsWith(".md") && f !== "index.md");
		const untranslated = pages.filter(p => !existsSync(join(DOCS, "zh", p))).map(p => p.replace(/\.md$/, ""));
		expect(untranslated.sort()).toEqual([...CONTRIBUTOR_PAGES].sort());
		for (const { params, content } of zhRoutes.paths()) {
			expect(content).toContain("只保留英文");
			expect(content).toContain(`](../${params.page}.md)`);
			expect(PLACEHOLDER.exec(content)?.[0] ?? null).toBeNull();
		}
	});

	for (const page of [...guide.map(p => `guide/${p}`), ...REFERENCE]) {
		test(`${page}: same headings, code blocks (but comments) and table rows as the English page; comments in Chinese`, () => {
			const zhPath = join(DOCS, "zh", page);
			if (!existsSync(zhPath)) throw new Error(`docs/zh/${page} is missing`);
			const zh = expandSections(zhPath);
			expect(PLACEHOLDER.exec(zh)?.[0] ?? null).toBeNull();
			expect(/[\u4e00-\u9fff]/.test(zh)).toBe(true);
			const zhShape = shape(zh);
			expect(zhShape.notes.filter(c => !/[\u4e00-\u9fff]/.test(c))).toEqual([]);
			expect(same(zh)).toEqual(same(expandSections(join(DOCS, page))));
		});
	}
});

describe("README_ZN.md in step with README.md", () => {
	test("same headings, code blocks (but comments) and table rows; every code comment in Chinese", () => {
		const en = readFileSync(join(ROOT, "README.md"), "utf8");
		const zh = readFileSync(join(ROOT, "README_ZN.md"), "utf8");
		expect(shape(zh).notes.filter(c => !/[\u4e00-\u9fff]/.test(c))).toEqual([]);
		expect(same(zh)).toEqual(same(en));
	});
});

/** Every Markdown file of the Chinese side, relative to the repository. */
const chinese = [
	"README_ZN.md",
	...readdirSync(join(DOCS, "zh"), { recursive: true, encoding: "utf8" })
		.filter(f => f.endsWith(".md"))
		.map(f => `docs/zh/${f}`),
];

/** The Chinese twin of an English page (repository-relative), when one exists. */
function twinOf(target: string): string | undefined {
	const zh = target === "README.md" ? "README_ZN.md" : target.replace(/^docs\//, "docs/zh/");
	return target !== zh && !target.startsWith("docs/zh/") && existsSync(join(ROOT, zh)) ? zh : undefined;
}

describe("Chinese links", () => {
	for (const file of chinese) {
		test(`${file}: no link to an English page with a Chinese twin; every anchor into a Chinese page exists`, () => {
			const text = readFileSync(join(ROOT, file), "utf8");
			const bad: string[] = [];
			for (const [, href = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
				if (/^[a-z]+:/i.test(href) || href.startsWith("/")) continue;
				const [path = "", hash] = href.split("#", 2);
				const target = path === "" ? file : relative(ROOT, resolve(dirname(join(ROOT, file)), path));
				const twin = twinOf(target);
				if (twin) bad.push(`${href} (twin: ${twin})`);
				else if (hash && target.endsWith(".md") && (target.startsWith("docs/zh/") || target === "README_ZN.md")) {
					const page = join(ROOT, target);
					if (!existsSync(page) || !anchors(expandSections(page)).includes(decodeURIComponent(hash))) bad.push(href);
				}
			}
			expect(bad).toEqual([]);
		});
	}
});
