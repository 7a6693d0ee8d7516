import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CONTINUED, rows } from "../../../src/text/rows.ts";
import { cutShown, showExactly, showExactlyCut } from "../../../src/text/show.ts";

describe("rows (contract §19): no caller text starts a terminal row", () => {
	test("a long line -> rows of at most `width` columns, every later row marked; wide characters count two", () => {
		// Below 16 columns of text a row still takes 16: a terminal that narrow gets wrapped rows, never empty ones.
		expect(rows("a".repeat(40), 10)).toEqual([
			"a".repeat(16),
			`${CONTINUED}${"a".repeat(16)}`,
			`${CONTINUED}${"a".repeat(8)}`,
		]);
		const r = rows(`${"x".repeat(30)}Approve? bash`, 20, "  ");
		expect(r[0]).toBe(`  ${"x".repeat(18)}`);
		expect(r.slice(1).every(row => row.startsWith(`  ${CONTINUED}`))).toBe(true);
		for (const row of rows("界".repeat(30), 21)) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(21);
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
