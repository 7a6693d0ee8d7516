import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { hasHidden, showLinesSafely, showSafely } from "../../../src/text/show.ts";

/** Strings drawn from the ranges that matter: ASCII/Latin-1, the bidi/format block, surrogates, tags, emoji. */
const interesting = fc
	.array(
		fc.oneof(
			fc.integer({ min: 0, max: 0x2ff }),
			fc.integer({ min: 0x2000, max: 0x206f }),
			fc.integer({ min: 0xd800, max: 0xdfff }),
			fc.integer({ min: 0xfe00, max: 0xffff }),
			fc.integer({ min: 0x1f600, max: 0x1f64f }),
			fc.integer({ min: 0xe0000, max: 0xe007f }),
		),
		{ maxLength: 120 },
	)
	.map(cps =>
		cps.map(cp => (cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp))).join(""),
	);

describe("showSafely (contract §16)", () => {
	test("the exploits of issue 20 -> visible escapes, nothing a terminal interprets", () => {
		expect(showSafely("touch /tmp/pwned\rCommand: ls -la")).toBe("touch /tmp/pwned\\rCommand: ls -la");
		expect(showSafely("rm -rf ~ \x1b[2K\x1b[1GCommand: ls")).toBe("rm -rf ~ \\x1b[2K\\x1b[1GCommand: ls");
		expect(showSafely("a\u009b2Kb")).toBe("a\\x9b2Kb");
		expect(showSafely("ls \u202edwp/pmt/ hcuot")).toBe("ls \\u202edwp/pmt/ hcuot");
	});

	test("every C0/C1 control, DEL, format, bidi and separator character is escaped; printable text stays", () => {
		const hidden = [
			"\0",
			"\t",
			"\n",
			"\x7f",
			"\u0085",
			"\u00ad",
			"\u061c",
			"\u200b",
			"\u200d",
			"\u200e",
			"\u2028",
			"\u2029",
			"\u202a",
			"\u2066",
			"\u2069",
			"\u2060",
			"\ufeff",
			"\u{e0041}",
			"\ud800",
		];
		for (const ch of hidden) {
			const shown = showSafely(ch);
			expect(shown).toStartWith("\\");
			expect(hasHidden(shown)).toBe(false);
		}
		expect(showSafely("\u{e0041}")).toBe("\\u{e0041}");
		expect(showSafely("grep 'a\\|b' — ünï 漢字 🙂")).toBe("grep 'a\\|b' — ünï 漢字 🙂");
	});

	test("a long value is cut only with a marker saying how much is not shown", () => {
		expect(showSafely("x".repeat(10), 10)).toBe("x".repeat(10));
		expect(showSafely("x".repeat(25), 10)).toBe(`${"x".repeat(10)}… 15 more characters`);
		// An escape is never split: it is shown whole or counted as not shown.
		expect(showSafely(`${"x".repeat(8)}\x1b[2K`, 10)).toBe(`${"x".repeat(8)}… 4 more characters`);
	});

	test("property: the result never holds a hidden character, and without a cut it is marked when cut", () => {
		fc.assert(
			fc.property(interesting, fc.nat(300), (s, max) => {
				const whole = showSafely(s);
				const cut = showSafely(s, max);
				const marked = cut === whole || /… \d+ more characters$/.test(cut);
				return !hasHidden(whole) && !hasHidden(cut) && marked;
			}),
		);
	});

	test("notifications keep their line breaks, each line escaped", () => {
		expect(showLinesSafely("a\x1b[31m\nb\r")).toBe("a\\x1b[31m\nb\\r");
	});
});
