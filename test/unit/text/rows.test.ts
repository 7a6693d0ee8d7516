import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CONTINUED, MIN_ROW, ROW_MAX, rows, rowWidth, textWidth } from "../../../src/text/rows.ts";
import { cutShown, showExactly, showExactlyCut } from "../../../src/text/show.ts";

describe("rows (contract §19): no caller text starts a terminal row", () => {
	test("a long line -> rows of at most `width` columns, every later row marked; widths at their widest", () => {
		// The mark is East-Asian ambiguous: it counts two columns, as a CJK terminal draws it.
		expect(rows("a".repeat(40), 16)).toEqual([
			"a".repeat(16),
			`${CONTINUED}${"a".repeat(13)}`,
			`${CONTINUED}${"a".repeat(11)}`,
		]);
		const r = rows(`${"x".repeat(30)}Approve? bash`, 20, "  ");
		expect(r[0]).toBe(`  ${"x".repeat(18)}`);
		expect(r.slice(1).every(row => row.startsWith(`  ${CONTINUED}`))).toBe(true);
		for (const row of rows("界".repeat(30), 21)) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(21);
		// VS16 makes a pictograph two columns; a ZWJ sequence counts as its parts (a terminal may draw them apart).
		expect(rows("☺\ufe0f".repeat(10), 16)[0]).toBe("☺\ufe0f".repeat(8));
		expect(textWidth("👨\u200d👩\u200d👧")).toBe(8);
		expect(textWidth("±α┆")).toBe(6);
		// A pictograph without VS16 too: a terminal with an emoji font draws it wide.
		expect(textWidth("☺©")).toBe(4);
	});

	test("rowWidth: at most ROW_MAX, the screen's own room when narrower, null under MIN_ROW", () => {
		expect(rowWidth(200, 4)).toBe(ROW_MAX);
		expect(rowWidth(30, 4)).toBe(26);
		expect(rowWidth(MIN_ROW + 4, 4)).toBe(MIN_ROW);
		expect(rowWidth(MIN_ROW + 3, 4)).toBeNull();
		expect(rowWidth(Number.NaN, 0)).toBeNull();
	});

	test("a cluster no terminal agrees on is shown as escapes: controls, more than 8 code points, wider than 4", () => {
		expect(rows("a\x1bb", 20)).toEqual(["a\\u{1b}b"]);
		const zalgo = rows(`e${"\u0301".repeat(9)}`, 40).map(r => r.replace(CONTINUED, ""));
		expect(zalgo.join("")).toBe(`\\u{65}${"\\u{301}".repeat(9)}`);
		const zwj = rows("👨\u200d👩\u200d👧", 20).map(r => r.replace(CONTINUED, ""));
		expect(zwj.join("")).toBe("\\u{1f468}\\u{200d}\\u{1f469}\\u{200d}\\u{1f467}");
	});

	test("a line break inside the text -> the next line is a continuation too", () => {
		expect(rows("host: one\nApprove? y", Number.POSITIVE_INFINITY)).toEqual(["host: one", `${CONTINUED}Approve? y`]);
	});

	test("property: rows fit the width (>= 20) and only the first row is unmarked", () => {
		fc.assert(
			fc.property(fc.string({ maxLength: 400 }), fc.integer({ min: 20, max: 200 }), (text, width) => {
				const out = rows(showExactly(text), width, "  ");
				expect(out[0]?.startsWith("  ")).toBe(true);
				for (const row of out) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(width);
				for (const row of out.slice(1)) expect(row.startsWith(`  ${CONTINUED}`)).toBe(true);
			}),
		);
	});
});

describe("showExactly: every backslash shown starts an escape", () => {
	test("a literal backslash-n and a line break read differently; plain text is unchanged", () => {
		expect(showExactly("a\\nb")).toBe("a\\\\nb");
		expect(showExactly("a\nb")).toBe("a\\nb");
		expect(showExactly("make all")).toBe("make all");
		expect(showExactly("\x1b[2K\u202e")).toBe("\\x1b[2K\\u202e");
	});

	test("property: read back as JSON escapes, the shown text is the original (C0, backslash, quote)", () => {
		fc.assert(
			fc.property(fc.string({ maxLength: 200 }), text => {
				const shown = showExactly(text);
				expect(shown.includes("\n")).toBe(false);
				if (!/[\x7f-\x9f]/.test(text)) {
					const json = shown.replaceAll('"', '\\"').replace(/\\x([0-9a-f]{2})/g, "\\u00$1");
					expect(JSON.parse(`"${json}"`)).toBe(text);
				}
			}),
		);
	});

	test("a long text keeps start and end, quoted, and counts what is not shown; a cut start never ends inside an escape", () => {
		const cut = showExactlyCut(`${"a".repeat(100)}MIDDLE${"b".repeat(100)}`, 40);
		expect(cut).toBe(`"${"a".repeat(28)}" … 166 characters not shown … "${"b".repeat(12)}"`);
		expect(cutShown("ab\\\\cd", 3)).toBe("ab…");
		expect(cutShown("ab\\ncd", 3)).toBe("ab…");
		expect(cutShown("ab\\\\cd", 4)).toBe("ab\\\\…");
		expect(cutShown("short", 10)).toBe("short");
	});
});
