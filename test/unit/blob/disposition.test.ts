/**
 * A download's `Content-Disposition` (src/blob/disposition.ts, issue 38 finding 9): the file's base name,
 * never a descriptor number; hostile names (quotes, backslashes, CR/LF, non-ASCII) never break the header.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { contentDisposition } from "../../../src/blob/disposition.ts";
import { anyText } from "../../helpers/arbitraries.ts";

/** The name a client takes from the header: `filename*` when present (RFC 6266 §4.3), else `filename`. */
function savedName(header: string): string {
	const ext = /filename\*=UTF-8''([^;]*)/.exec(header);
	if (ext) return decodeURIComponent(ext[1] as string);
	return (/filename="([^"]*)"/.exec(header) as RegExpExecArray)[1] as string;
}

describe("contentDisposition", () => {
	test("a plain name -> attachment with that name only", () => {
		expect(contentDisposition("/home/u/build/firmware-1.2.bin")).toBe('attachment; filename="firmware-1.2.bin"');
	});

	test('quotes, backslashes, CR/LF and % -> "_" in filename, the exact name in filename*', () => {
		const name = 'a"b\\c\r\nSet-Cookie: x=1%41.txt';
		const header = contentDisposition(`/tmp/${name}`);
		expect(header).toBe(
			"attachment; filename=\"a_b_c__Set-Cookie: x=1_41.txt\"; filename*=UTF-8''a%22b%5Cc%0D%0ASet-Cookie%3A%20x%3D1%2541.txt",
		);
		expect(header).not.toMatch(/[\r\n]/);
		expect(savedName(header)).toBe(name);
	});

	test("non-ASCII (CJK, emoji, combining, bidi) -> ASCII fallback plus UTF-8 filename*", () => {
		for (const name of ["报告.pdf", "😀.log", "e\u0301t\u00e9", "\u202egnp.exe"]) {
			const header = contentDisposition(`/x/${name}`);
			expect(header).toMatch(/^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
			expect(savedName(header)).toBe(name);
		}
	});

	test("generated: any name -> one header line of printable ASCII that gives the name back", () => {
		fc.assert(
			fc.property(anyText({ minLength: 1, maxLength: 40 }), raw => {
				const name = raw.replaceAll("/", "_").replace(/^\.{1,2}$/, "_");
				const header = contentDisposition(`/d/${name}`);
				expect(header).toMatch(/^[\x20-\x7e]+$/);
				expect(savedName(header)).toBe(name.isWellFormed() ? name : name.toWellFormed());
			}),
			{ numRuns: 200 },
		);
	});
});
