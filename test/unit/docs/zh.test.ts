/**
 * The Chinese site is whole for the guide: every page under docs/guide/ has its twin under docs/zh/guide/ that a
 * reader gets with the same structure (headings level by level, code blocks, table rows, after the README
 * sections are put in place), and no placeholder. README_ZN.md keeps step with README.md the same way. Pages
 * added later (by anyone) are held to this too: the list is read from the folder.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expandSections } from "../../../docs/.vitepress/sections.ts";
import { ROOT } from "../../helpers/host.ts";

const EN = join(ROOT, "docs", "guide");
const ZH = join(ROOT, "docs", "zh", "guide");
const PLACEHOLDER = /尚未翻译|本页尚无中文版|\bTODO\b|\bTBD\b|待翻译/;

/** What a reader can compare across languages: heading levels in order, code blocks, table rows. */
function shape(text: string) {
	const headings: number[] = [];
	let fences = 0;
	let rows = 0;
	let inFence = false;
	for (const line of text.split("\n")) {
		if (/^(```|~~~)/.test(line)) {
			inFence = !inFence;
			if (inFence) fences++;
			continue;
		}
		if (inFence) continue;
		const h = /^(#{1,6}) /.exec(line);
		if (h?.[1]) headings.push(h[1].length);
		if (/^\|.*\|\s*$/.test(line) && !/^\|[\s:|-]+\|\s*$/.test(line)) rows++;
	}
	return { headings, fences, rows };
}

const pages = readdirSync(EN).filter(f => f.endsWith(".md"));

describe("docs/zh/guide: a twin for every guide page", () => {
	test("the guide has pages, and every one has a Chinese twin", () => {
		expect(pages.length).toBeGreaterThan(10);
		expect(pages.filter(p => !existsSync(join(ZH, p)))).toEqual([]);
		expect(readdirSync(ZH).filter(f => f.endsWith(".md") && !pages.includes(f))).toEqual([]);
	});

	for (const page of pages) {
		test(`${page}: same headings, code blocks and table rows as the English page; no placeholder`, () => {
			const zhPath = join(ZH, page);
			if (!existsSync(zhPath)) throw new Error(`docs/zh/guide/${page} is missing`);
			const en = expandSections(join(EN, page));
			const zh = expandSections(zhPath);
			expect(PLACEHOLDER.exec(zh)?.[0] ?? null).toBeNull();
			expect(/[\u4e00-\u9fff]/.test(zh)).toBe(true);
			expect(shape(zh)).toEqual(shape(en));
		});
	}
});

describe("README_ZN.md in step with README.md", () => {
	test("same headings, code blocks and table rows", () => {
		const en = readFileSync(join(ROOT, "README.md"), "utf8");
		const zh = readFileSync(join(ROOT, "README_ZN.md"), "utf8");
		expect(shape(zh)).toEqual(shape(en));
	});
});
