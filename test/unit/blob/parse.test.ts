import { describe, expect, test } from "bun:test";
import { BLOB_ERRORS, type BlobCode, parseBlobQuery, parseRange, resolveBlobPath } from "../../../src/blob/parse.ts";

const q = (s: string, method = "POST") => parseBlobQuery(new URLSearchParams(s), method);

describe("parseBlobQuery", () => {
	const ok: Array<[string, string, number | null]> = [
		["path=/a/b", "/a/b", null],
		["path=rel%20dir/x", "rel dir/x", null],
		["path=~/x&offset=0", "~/x", 0],
		["path=x&offset=42", "x", 42],
		["path=x&offset=007", "x", 7],
		["path=x&offset=9007199254740991", "x", Number.MAX_SAFE_INTEGER],
	];
	for (const [query, path, offset] of ok) {
		test(`${query} -> path ${JSON.stringify(path)}, offset ${offset}`, () => {
			expect(q(query)).toEqual({ ok: true, value: { path, offset } });
		});
	}

	const bad: Array<[string, BlobCode, string]> = [
		["", "bad_path", "exactly once"],
		["path=", "bad_path", "empty"],
		["path=a&path=b", "bad_path", "exactly once"],
		["path=a%00b", "bad_path", "NUL"],
		["path=x&offset=", "bad_offset", "non-negative"],
		["path=x&offset=-1", "bad_offset", "non-negative"],
		["path=x&offset=1.5", "bad_offset", "non-negative"],
		["path=x&offset=1e3", "bad_offset", "non-negative"],
		["path=x&offset=%201", "bad_offset", "non-negative"],
		["path=x&offset=9007199254740992", "bad_offset", "non-negative"],
		["path=x&offset=1&offset=1", "bad_offset", "non-negative"],
	];
	for (const [query, code, words] of bad) {
		test(`${JSON.stringify(query)} -> ${code}`, () => {
			const r = q(query);
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.code).toBe(code);
				expect(r.why).toContain(words);
			}
		});
	}

	test("offset on GET or HEAD -> bad_offset pointing at Range", () => {
		for (const m of ["GET", "HEAD"]) {
			const r = q("path=x&offset=0", m);
			expect(r).toMatchObject({ ok: false, code: "bad_offset" });
			if (!r.ok) expect(r.why).toContain("Range");
		}
	});
});

describe("resolveBlobPath", () => {
	const base = { home: "/home/u", cwd: "/work/proj" };
	const cases: Array<[string, string]> = [
		["/abs/file", "/abs/file"],
		["/abs/../etc/x", "/etc/x"],
		["~", "/home/u"],
		["~/", "/home/u"],
		["~/a/b", "/home/u/a/b"],
		["~/../other", "/home/other"],
		["rel/x", "/work/proj/rel/x"],
		["./x", "/work/proj/x"],
		["../up", "/work/up"],
		["~user/x", "/work/proj/~user/x"],
		["a~/b", "/work/proj/a~/b"],
	];
	for (const [raw, want] of cases) {
		test(`${raw} -> ${want}`, () => {
			expect(resolveBlobPath(raw, base)).toBe(want);
		});
	}
	test("no working directory from the host (fact main-cwd): relative paths null, absolute and ~ still resolve", () => {
		const none = { home: "/home/u", cwd: null };
		for (const [raw, want] of cases) {
			const relative = !raw.startsWith("/") && raw !== "~" && !raw.startsWith("~/");
			expect(resolveBlobPath(raw, none)).toBe(relative ? null : want);
		}
	});
});

describe("parseRange", () => {
	const SIZE = 100; // bytes 0..99
	const ok: Array<[string | null, { start: number; end: number } | null]> = [
		[null, null],
		["bytes=0-9", { start: 0, end: 9 }],
		["bytes=10-", { start: 10, end: 99 }],
		["bytes=-5", { start: 95, end: 99 }],
		["bytes=-500", { start: 0, end: 99 }],
		["bytes=99-99", { start: 99, end: 99 }],
		["bytes=50-1000", { start: 50, end: 99 }],
		["bytes=0-99999999999999999999", { start: 0, end: 99 }],
		["Bytes = 1-2 ", { start: 1, end: 2 }],
		["items=0-5", null], // another unit is ignored (RFC 9110 §14.2)
		["bytes=0-1,5-6", null], // several ranges: ignored, the whole file is served (RFC 9110 §14.2)
		["bytes=0-1, 200-300", null],
	];
	for (const [header, want] of ok) {
		test(`${JSON.stringify(header)} of ${SIZE} -> ${JSON.stringify(want)}`, () => {
			expect(parseRange(header, SIZE)).toEqual({ ok: true, value: want });
		});
	}

	const unsatisfiable: Array<[string, number]> = [
		["bytes=100-", SIZE], // starts at the end
		["bytes=100-200", SIZE],
		["bytes=5-4", SIZE],
		["bytes=-0", SIZE],
		["bytes=-", SIZE],
		["bytes=", SIZE],
		["bytes=a-b", SIZE],
		["bytes=+1-2", SIZE],
		["bytes 0-1", SIZE],
		["bytes=0-", 0], // an empty file has no satisfiable range
		["bytes=-1", 0],
	];
	for (const [header, size] of unsatisfiable) {
		test(`${JSON.stringify(header)} of ${size} -> range_not_satisfiable`, () => {
			expect(parseRange(header, size)).toMatchObject({ ok: false, code: "range_not_satisfiable" });
		});
	}
});

describe("BLOB_ERRORS", () => {
	test("codes are snake_case and map to the statuses of the contract", () => {
		for (const code of Object.keys(BLOB_ERRORS)) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
		expect(BLOB_ERRORS).toMatchObject({
			bad_path: 400,
			bad_offset: 400,
			empty_body: 400,
			is_directory: 400,
			not_found: 404,
			offset_mismatch: 409,
			upload_in_progress: 409,
			range_not_satisfiable: 416,
			write_failed: 500,
		});
	});
});
