import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authenticate, TokenSet } from "../../../src/config/auth.ts";
import { type BridgeConfig, validateConfig } from "../../../src/config/config.ts";
import { addToken, loadConfig, revokeToken, rotateToken } from "../../../src/config/file.ts";
import { tokenChanges } from "../../../src/config/tokens.ts";

const FILE = "/cfg/a2a-bridge.json";
const OWNER_T = "o".repeat(43);
const A = "a".repeat(43);
const B = "b".repeat(43);

describe("validateConfig: tokens and blob", () => {
	test("absent -> no named tokens, blob write", () => {
		const r = validateConfig({ token: OWNER_T }, FILE);
		expect(r.ok && r.value.tokens).toEqual([]);
		expect(r.ok && r.value.blob).toBe("write");
	});

	test("well-formed entries and each blob mode -> kept", () => {
		for (const blob of ["write", "read", "off"]) {
			const r = validateConfig(
				{
					token: OWNER_T,
					tokens: [
						{ name: "ci", token: A },
						{ name: "b-2_x", token: B },
					],
					blob,
				},
				FILE,
			);
			expect(r).toMatchObject({
				ok: true,
				value: {
					blob,
					tokens: [
						{ name: "ci", token: A },
						{ name: "b-2_x", token: B },
					],
				},
			});
		}
	});

	const bad: Array<[string, Record<string, unknown>, string]> = [
		["tokens not an array", { tokens: {} }, "field 'tokens' must be an array"],
		["tokens null", { tokens: null }, "field 'tokens' must be an array"],
		["entry not an object", { tokens: ["x"] }, "field 'tokens[0]' must be an object"],
		["entry an array", { tokens: [[]] }, "field 'tokens[0]' must be an object"],
		[
			"a scope field",
			{ tokens: [{ name: "ci", token: A, scope: "read" }] },
			"field 'tokens[0].scope' is not a token field",
		],
		[
			"a __proto__ key",
			{ tokens: [JSON.parse(`{"name":"ci","token":"${A}","__proto__":{}}`)] },
			"field 'tokens[0].__proto__'",
		],
		["name missing", { tokens: [{ token: A }] }, "field 'tokens[0].name' must be 1-32"],
		["name upper case", { tokens: [{ name: "CI", token: A }] }, "field 'tokens[0].name' must be 1-32"],
		["name with a space", { tokens: [{ name: "c i", token: A }] }, "field 'tokens[0].name' must be 1-32"],
		["name 33 chars", { tokens: [{ name: "x".repeat(33), token: A }] }, "field 'tokens[0].name' must be 1-32"],
		["name empty", { tokens: [{ name: "", token: A }] }, "field 'tokens[0].name' must be 1-32"],
		["name owner", { tokens: [{ name: "owner", token: A }] }, "field 'tokens[0].name' must not be 'owner'"],
		[
			"name repeated",
			{
				tokens: [
					{ name: "a", token: A },
					{ name: "a", token: B },
				],
			},
			"field 'tokens[1].name' repeats",
		],
		["token missing", { tokens: [{ name: "a" }] }, "field 'tokens[0].token' must be a string"],
		["token short", { tokens: [{ name: "a", token: "x".repeat(31) }] }, "field 'tokens[0].token' must be at least 32"],
		["token with whitespace", { tokens: [{ name: "a", token: `${"x".repeat(32)} y` }] }, "must not contain whitespace"],
		["token non-ASCII", { tokens: [{ name: "a", token: "é".repeat(40) }] }, "must be printable ASCII"],
		[
			"token repeats another",
			{
				tokens: [
					{ name: "a", token: A },
					{ name: "b", token: A },
				],
			},
			"field 'tokens[1].token' must differ",
		],
		[
			"token repeats the owner's",
			{ token: OWNER_T, tokens: [{ name: "a", token: OWNER_T }] },
			"field 'tokens[0].token' must differ",
		],
		[
			"too many",
			{ tokens: Array.from({ length: 257 }, (_, i) => ({ name: `t${i}`, token: `${i}`.padEnd(40, "x") })) },
			"at most 256",
		],
		["blob bogus", { blob: "readonly" }, `field 'blob' must be "write", "read" or "off"`],
		["blob null", { blob: null }, "field 'blob'"],
		["blob upper case", { blob: "READ" }, "field 'blob'"],
	];
	for (const [name, raw, message] of bad) {
		test(`${name} -> refused naming the field`, () => {
			const r = validateConfig({ token: OWNER_T, ...raw }, FILE);
			expect(r.ok).toBe(false);
			expect(!r.ok && r.why).toContain(FILE);
			expect(!r.ok && r.why).toContain(message);
		});
	}
});

describe("TokenSet", () => {
	const set = () =>
		new TokenSet([
			{ name: "owner", token: OWNER_T },
			{ name: "ci", token: A },
		]);
	test("identify -> the name and digest of a live token, null for anything else", () => {
		const s = set();
		expect(s.identify(A)?.tokenName).toBe("ci");
		expect(s.identify(OWNER_T)?.tokenName).toBe("owner");
		expect(s.identify(A)?.secretDigest).toBe(TokenSet.digest(A));
		for (const wrong of ["", `${A}x`, A.slice(1), B, "owner", "ci"]) expect(s.identify(wrong)).toBe(null);
	});
	test("set replaces a secret (old one refused); remove refuses it; others untouched", () => {
		const s = set();
		s.set("ci", B);
		expect(s.identify(A)).toBe(null);
		expect(s.identify(B)?.tokenName).toBe("ci");
		expect(s.remove("ci")).toBe(true);
		expect(s.identify(B)).toBe(null);
		expect(s.remove("ci")).toBe(false);
		expect(s.identify(OWNER_T)?.tokenName).toBe("owner");
		expect(s.names()).toEqual(["owner"]);
	});
	test("authenticate -> 401 kinds as before; the identity on success", () => {
		const s = set();
		expect(authenticate(null, s)).toEqual({ ok: false, code: "unauthorized", why: expect.any(String) });
		expect(authenticate(`Basic ${A}`, s)).toEqual({ ok: false, code: "unauthorized", why: expect.any(String) });
		expect(authenticate("Bearer nope", s)).toEqual({ ok: false, code: "invalid_token", why: expect.any(String) });
		expect(authenticate(`bearer ${A}`, s)).toMatchObject({ ok: true, who: { tokenName: "ci" } });
	});
});

describe("token file operations", () => {
	let dir: string;
	let path: string;
	const mode = () => statSync(path).mode & 0o777;
	const disk = () => JSON.parse(readFileSync(path, "utf8"));
	const live = (): BridgeConfig => loadConfig(path).config;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-tokens-"));
		path = join(dir, "a2a-bridge.json");
		writeFileSync(path, JSON.stringify({ token: OWNER_T, blob: "read", tokens: [{ name: "ci", token: A }] }), {
			mode: 0o600,
		});
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	test("addToken -> a fresh 43-char secret appended at 0600, other fields kept", () => {
		const t = addToken(path, live(), "bot");
		expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(disk()).toEqual({
			token: OWNER_T,
			blob: "read",
			tokens: [
				{ name: "ci", token: A },
				{ name: "bot", token: t },
			],
		});
		expect(mode()).toBe(0o600);
		expect(validateConfig(disk(), path).ok).toBe(true);
	});
	test("addToken: existing name, owner, bad name -> refused, file unchanged", () => {
		const before = readFileSync(path, "utf8");
		expect(() => addToken(path, live(), "ci")).toThrow("exists already");
		expect(() => addToken(path, live(), "owner")).toThrow("must not be 'owner'");
		expect(() => addToken(path, live(), "../x")).toThrow("must be 1-32");
		expect(readFileSync(path, "utf8")).toBe(before);
	});
	test("revokeToken -> the entry goes, the rest stays; unknown or owner -> refused", () => {
		revokeToken(path, live(), "ci");
		expect(disk()).toEqual({ token: OWNER_T, blob: "read", tokens: [] });
		expect(() => revokeToken(path, live(), "ci")).toThrow("no token named 'ci'");
		expect(() => revokeToken(path, live(), "owner")).toThrow("cannot be revoked");
	});
	test("rotateToken(name) -> that entry's secret only; rotateToken() -> the owner's only", () => {
		const t = rotateToken(path, live(), "ci");
		expect(disk().tokens).toEqual([{ name: "ci", token: t }]);
		expect(disk().token).toBe(OWNER_T);
		const o = rotateToken(path, live());
		expect(disk()).toMatchObject({ token: o, tokens: [{ name: "ci", token: t }] });
		expect(() => rotateToken(path, live(), "nobody")).toThrow("no token named 'nobody'");
	});
	test("a 'tokens' field broken on disk -> add refused, file unchanged", () => {
		const cfg = live();
		writeFileSync(path, JSON.stringify({ token: OWNER_T, tokens: "oops" }));
		expect(() => addToken(path, cfg, "bot")).toThrow("field 'tokens' must be an array");
		expect(disk().tokens).toBe("oops");
	});
});

describe("tokenChanges: a re-read file against the live tokens", () => {
	const live = [
		{ name: "owner", token: OWNER_T },
		{ name: "ci", token: A },
	];
	test("unchanged -> nothing (setting a secret again would end its sessions)", () => {
		expect(tokenChanges(live, OWNER_T, [{ name: "ci", token: A }])).toEqual({ set: [], revoke: [] });
	});
	test("added, re-secreted and removed names; the owner is never revoked, and kept when the file has none", () => {
		expect(tokenChanges(live, undefined, [{ name: "bot", token: B }])).toEqual({
			set: [{ name: "bot", token: B }],
			revoke: ["ci"],
		});
		expect(tokenChanges(live, B, [{ name: "ci", token: OWNER_T }])).toEqual({
			set: [
				{ name: "ci", token: OWNER_T },
				{ name: "owner", token: B },
			],
			revoke: [],
		});
	});
});
