import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { parseDictionary, parseDigest, sfSha256, wantsSha256 } from "../../../src/blob/digest.ts";
import { contentKey, DigestCache } from "../../../src/blob/digest-cache.ts";

const hex = (s: string) => createHash("sha256").update(s).digest("hex");
const b64 = (s: string) => createHash("sha256").update(s).digest("base64");

describe("parseDigest (Repr-Digest / Content-Digest, RFC 9530 over RFC 8941 dictionaries)", () => {
	test("absent -> null (nothing to check)", () => {
		expect(parseDigest("Repr-Digest", null)).toEqual({ ok: true, value: null });
	});
	const good: Array<[string, string]> = [
		[`sha-256=:${b64("x")}:`, "x"],
		[`  sha-256=:${b64("x")}:  `, "x"],
		[`sha-512=:AAAA:, sha-256=:${b64("x")}:`, "x"],
		[`sha-256=:${b64("y")}:;p=1, md5=:AAAA:`, "y"],
		[`sha-256=:${b64("old")}:, sha-256=:${b64("last")}:`, "last"],
		[`unixsum=(1 2);a, sha-256=:${b64("z")}:`, "z"],
	];
	for (const [raw, of] of good) {
		test(`${raw} -> the sha-256 of '${of}'`, () => {
			expect(parseDigest("Repr-Digest", raw)).toEqual({ ok: true, value: hex(of) });
		});
	}
	const bad: Array<[string, string]> = [
		["", "names no algorithm"],
		["md5=:AAAA:", "names no algorithm this bridge computes (got: md5)"],
		["sha-256=abc", "must be a byte sequence of 32 bytes"],
		["sha-256=:AAAA:", "must be a byte sequence of 32 bytes"],
		["sha-256=:%%%:", "not a Structured Field dictionary"],
		["sha-256=:AAAA", "not a Structured Field dictionary"],
		["SHA-256=:AAAA:", "not a Structured Field dictionary"],
		[`sha-256=:${b64("x")}:,`, "not a Structured Field dictionary"],
		[`sha-256=:${b64("x")}: junk`, "not a Structured Field dictionary"],
		["a=(1 2", "not a Structured Field dictionary"],
		['a="unterminated', "not a Structured Field dictionary"],
	];
	for (const [raw, why] of bad) {
		test(`'${raw}' -> bad_digest (${why})`, () => {
			const r = parseDigest("Content-Digest", raw);
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.code).toBe("bad_digest");
				expect(r.why).toContain(why);
				expect(r.why).toContain("Content-Digest");
			}
		});
	}
	test("issue 30: base64 that is no base64 ('A', 'AAAAA', '=', 'AB=') -> bad_digest, never a throw", () => {
		for (const content of ["A", "AAAAA", "=", "AB=", "A===", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=A"]) {
			for (const name of ["Repr-Digest", "Content-Digest"]) {
				expect(parseDigest(name, `sha-256=:${content}:`)).toMatchObject({ ok: false, code: "bad_digest" });
			}
			expect(wantsSha256(`sha-256=:${content}:`)).toMatchObject({ ok: false, code: "bad_digest" });
		}
		// Unpadded base64 of 32 bytes is accepted (RFC 8941: parsers should not insist on padding).
		expect(parseDigest("Repr-Digest", `sha-256=:${b64("x").replace(/=+$/, "")}:`)).toEqual({
			ok: true,
			value: hex("x"),
		});
	});
	test("issue 30: any field value -> a value or bad_digest; the parsers never throw", () => {
		const sfChars = fc.constantFrom(...'sha-256=:,;()" ?*0123456789AZaz+/=\t'.split(""));
		const field = fc.oneof(
			fc.string(),
			fc.array(sfChars, { maxLength: 40 }).map(a => a.join("")),
			fc.string().map(x => `sha-256=:${x}:`),
			fc.base64String().map(x => `sha-256=:${x}:`),
		);
		fc.assert(
			fc.property(field, raw => {
				for (const r of [parseDigest("Repr-Digest", raw), wantsSha256(raw)]) {
					if (!r.ok) expect(r.code).toBe("bad_digest");
				}
				const d = parseDigest("Content-Digest", raw);
				if (d.ok && d.value !== null) expect(d.value).toMatch(/^[0-9a-f]{64}$/);
			}),
			{ numRuns: 3000 },
		);
	});
	test("other item kinds parse (string, token, boolean, decimal) and are skipped", () => {
		const d = parseDictionary('a="s\\"q", b=tok/en, c, d=?0, e=1.5;x=y');
		expect([...(d?.keys() ?? [])]).toEqual(["a", "b", "c", "d", "e"]);
	});
	test("sfSha256 writes what parseDigest reads", () => {
		expect(parseDigest("Repr-Digest", sfSha256(hex("round")))).toEqual({ ok: true, value: hex("round") });
	});
});

describe("wantsSha256 (Want-Repr-Digest)", () => {
	const cases: Array<[string | null, boolean]> = [
		[null, false],
		["sha-256=1", true],
		["sha-256=10, sha-512=3", true],
		["sha-512=3", false],
		["sha-256=0", false],
	];
	for (const [raw, want] of cases) {
		test(`${raw} -> ${want}`, () => expect(wantsSha256(raw)).toEqual({ ok: true, value: want }));
	}
	for (const raw of ["sha-256=11", "sha-256=-1", "sha-256=high", "sha-256=:AAAA:", "sha-256=1,"]) {
		test(`'${raw}' -> bad_digest`, () => expect(wantsSha256(raw)).toMatchObject({ ok: false, code: "bad_digest" }));
	}
});

describe("DigestCache", () => {
	test("bounded at 256 entries, least recently used out first; recall refreshes", () => {
		const cache = new DigestCache();
		for (let i = 0; i < 256; i++) cache.remember(`k${i}`, `d${i}`);
		expect(cache.recall("k0")).toBe("d0");
		cache.remember("k256", "d256");
		expect(cache.recall("k1")).toBeUndefined();
		expect(cache.recall("k0")).toBe("d0");
		expect(cache.recall("k256")).toBe("d256");
	});
	test("the key changes when the file is rewritten in place at the same size", () => {
		const path = join(mkdtempSync(join(tmpdir(), "a2a-digest-")), "f");
		writeFileSync(path, "aaaa");
		const fd = openSync(path, "r");
		const before = contentKey(fd);
		writeFileSync(path, "bbbb");
		expect(contentKey(fd)).not.toBe(before);
		closeSync(fd);
	});
});
