import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
	authenticate,
	type BearerParse,
	checkHostOrigin,
	type HostOriginResult,
	hostName,
	parseBearer,
	TokenSet,
} from "../../../src/config/auth.ts";
import { tokenChanges } from "../../../src/config/tokens.ts";

const TOKEN = "t0k3n-0123456789abcdefghijklmnopqrstuvwxyz"; // 42 chars

describe("parseBearer", () => {
	const cases: Array<[string | null, BearerParse]> = [
		[null, { kind: "missing" }],
		["", { kind: "missing" }],
		["   ", { kind: "missing" }],
		["Basic dXNlcjpwdw==", { kind: "other_scheme" }],
		["Token abc", { kind: "other_scheme" }],
		["Bearerabc", { kind: "other_scheme" }],
		["Bearer abc", { kind: "bearer", secret: "abc" }],
		["bearer abc", { kind: "bearer", secret: "abc" }],
		["BEARER abc", { kind: "bearer", secret: "abc" }],
		["BeArEr abc", { kind: "bearer", secret: "abc" }],
		["Bearer    abc   ", { kind: "bearer", secret: "abc" }],
		["  Bearer abc", { kind: "bearer", secret: "abc" }],
		["Bearer\tabc", { kind: "bearer", secret: "abc" }],
		["Bearer", { kind: "bearer", secret: "" }],
		["Bearer   ", { kind: "bearer", secret: "" }],
	];
	for (const [header, want] of cases) {
		test(`${JSON.stringify(header)} -> ${JSON.stringify(want)}`, () => {
			expect(parseBearer(header)).toEqual(want);
		});
	}

	test("the 'Bearer ' fast path agrees with the general grammar on random values", () => {
		const general = (h: string): BearerParse => {
			if (h.trim() === "") return { kind: "missing" };
			const m = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/.exec(h);
			if (m?.[1]?.toLowerCase() !== "bearer") return { kind: "other_scheme" };
			return { kind: "bearer", secret: (m[2] ?? "").trim() };
		};
		const tail = fc.string({
			unit: fc.constantFrom(" ", "\t", "\n", "\r", "\u2028", "\u00a0", "a", "Z", "9", "-", "="),
		});
		fc.assert(
			fc.property(tail, t => expect(parseBearer(`Bearer ${t}`)).toEqual(general(`Bearer ${t}`))),
			{
				numRuns: 2000,
			},
		);
	});
});

describe("authenticate (owner token only)", () => {
	const owner = new TokenSet([{ name: "owner", token: TOKEN }]);
	const who = {
		ok: true,
		who: { tokenName: "owner", secretDigest: TokenSet.digest(TOKEN), ended: expect.any(AbortSignal) },
	} as const;
	const cases: Array<[string, string | null, ReturnType<typeof authenticate>]> = [
		["no header", null, { ok: false, code: "unauthorized", why: expect.any(String) }],
		["empty header", "", { ok: false, code: "unauthorized", why: expect.any(String) }],
		["Basic scheme", "Basic dXNlcjpwdw==", { ok: false, code: "unauthorized", why: expect.any(String) }],
		["Bearer alone", "Bearer", { ok: false, code: "unauthorized", why: expect.any(String) }],
		["wrong Bearer token", "Bearer nope", { ok: false, code: "invalid_token", why: expect.any(String) }],
		[
			"token with one char changed",
			`Bearer ${TOKEN.slice(0, -1)}X`,
			{ ok: false, code: "invalid_token", why: expect.any(String) },
		],
		["right token", `Bearer ${TOKEN}`, who],
		["right token, lower-case scheme", `bearer ${TOKEN}`, who],
		["right token, upper-case scheme and extra spaces", `BEARER   ${TOKEN}  `, who],
	];
	for (const [name, header, want] of cases) {
		test(`${name} -> ${want.ok ? "ok" : (want as { code: string }).code}`, () => {
			expect(authenticate(header, owner)).toEqual(want);
		});
	}
});

describe("TokenSet: a table applied as a whole (issue 30 defect 7)", () => {
	const secret = (i: number) => `secret-${i}-${"s".repeat(32)}`;
	/** What the config watcher does with a re-read file: the diff against the live set, then set and revoke. */
	const apply = (set: TokenSet, table: Map<string, string>) => {
		const live = set.names().map(name => ({ name, token: set.secret(name) ?? "" }));
		const named = [...table].filter(([n]) => n !== "owner").map(([name, token]) => ({ name, token }));
		const changes = tokenChanges(live, table.get("owner"), named);
		for (const t of changes.set) set.set(t.name, t.token);
		for (const name of changes.revoke) set.remove(name);
	};
	const names = ["owner", "a", "b", "c"];
	// A table: distinct secrets (as validation demands), every name present or not, the owner always present.
	const table = fc
		.tuple(fc.shuffledSubarray([0, 1, 2, 3, 4, 5]), fc.subarray(names.slice(1)))
		.filter(([secrets, named]) => secrets.length >= named.length + 1)
		.map(([secrets, named]) => new Map(["owner", ...named].map((n, i) => [n, secret(secrets[i] ?? 0)])));

	test("moved: a's secret given to b (a removed) -> the secret identifies b, not nobody", () => {
		const set = new TokenSet([
			{ name: "owner", token: secret(0) },
			{ name: "a", token: secret(1) },
		]);
		apply(
			set,
			new Map([
				["owner", secret(0)],
				["b", secret(1)],
			]),
		);
		expect(set.identify(secret(1))?.tokenName).toBe("b");
		expect(set.names().sort()).toEqual(["b", "owner"]);
	});

	test("any sequence of valid tables -> after each, every secret identifies exactly its name and no other secret works", () => {
		fc.assert(
			fc.property(table, fc.array(table, { minLength: 1, maxLength: 6 }), (first, rest) => {
				const set = new TokenSet([...first].map(([name, token]) => ({ name, token })));
				for (const t of rest) {
					apply(set, t);
					for (const [name, s] of t) expect(set.identify(s)?.tokenName).toBe(name);
					const held = new Set(t.values());
					for (let i = 0; i < 6; i++) if (!held.has(secret(i))) expect(set.identify(secret(i))).toBeNull();
					expect(set.names().sort()).toEqual([...t.keys()].sort());
				}
			}),
			{ numRuns: 300 },
		);
	});
});

describe("hostName", () => {
	const cases: Array<[string, string | null]> = [
		["127.0.0.1:8080", "127.0.0.1"],
		["LOCALHOST", "localhost"],
		["[::1]:9", "[::1]"],
		["example.com", "example.com"],
		["a:b:c", null],
		["", null],
	];
	for (const [host, want] of cases) {
		test(`${JSON.stringify(host)} -> ${JSON.stringify(want)}`, () => {
			expect(hostName(host)).toBe(want);
		});
	}
});

describe("checkHostOrigin", () => {
	const P = 4567;
	const OK: HostOriginResult = { ok: true };
	const HOST: HostOriginResult = { ok: false, code: "forbidden_host", why: expect.any(String) };
	const ORIGIN: HostOriginResult = { ok: false, code: "forbidden_origin", why: expect.any(String) };
	// [name, Host, Origin, loopback bind, allowed origins, expected]
	const cases: Array<[string, string | null, string | null, boolean, string[], HostOriginResult]> = [
		["loopback: Host 127.0.0.1:port", `127.0.0.1:${P}`, null, true, [], OK],
		["loopback: Host 127.0.0.1 without port", "127.0.0.1", null, true, [], OK],
		["loopback: Host localhost:port", `localhost:${P}`, null, true, [], OK],
		["loopback: Host LocalHost (case)", `LocalHost:${P}`, null, true, [], OK],
		["loopback: Host [::1]:port", `[::1]:${P}`, null, true, [], OK],
		["loopback: Host evil.com", "evil.com", null, true, [], HOST],
		["loopback: Host evil.com:port", `evil.com:${P}`, null, true, [], HOST],
		["loopback: missing Host", null, null, true, [], HOST],
		["loopback: Host 127.0.0.1.evil.com", `127.0.0.1.evil.com:${P}`, null, true, [], HOST],
		["loopback: Host localhost.evil.com", "localhost.evil.com", null, true, [], HOST],
		["loopback: Host 127.0.0.2 (not a listed name)", `127.0.0.2:${P}`, null, true, [], HOST],
		["loopback: empty Host", "", null, true, [], HOST],
		["non-loopback: Host evil.com passes the Host check", "evil.com", null, false, [], OK],
		["non-loopback: missing Host passes the Host check", null, null, false, [], OK],
		["Origin absent", `127.0.0.1:${P}`, null, true, [], OK],
		["Origin same-origin", `127.0.0.1:${P}`, `http://127.0.0.1:${P}`, true, [], OK],
		["Origin same-origin via localhost", `localhost:${P}`, `http://localhost:${P}`, true, [], OK],
		["Origin on another port", `127.0.0.1:${P}`, `http://127.0.0.1:${P + 1}`, true, [], ORIGIN],
		["Origin with https scheme", `127.0.0.1:${P}`, `https://127.0.0.1:${P}`, true, [], ORIGIN],
		["Origin localhost for Host 127.0.0.1", `127.0.0.1:${P}`, `http://localhost:${P}`, true, [], ORIGIN],
		["Origin evil.com", `127.0.0.1:${P}`, "http://evil.com", true, [], ORIGIN],
		['Origin "null"', `127.0.0.1:${P}`, "null", true, [], ORIGIN],
		["Origin garbage", `127.0.0.1:${P}`, "garbage", true, [], ORIGIN],
		["Origin empty", `127.0.0.1:${P}`, "", true, [], ORIGIN],
		["Origin listed in allowedOrigins", `127.0.0.1:${P}`, "http://localhost:3000", true, ["http://localhost:3000"], OK],
		[
			"Origin not listed in allowedOrigins",
			`127.0.0.1:${P}`,
			"http://localhost:3001",
			true,
			["http://localhost:3000"],
			ORIGIN,
		],
		["non-loopback: foreign Origin refused", "example.com", "http://evil.com", false, [], ORIGIN],
		["non-loopback: same-origin", "example.com:8080", "http://example.com:8080", false, [], OK],
		["bad Host checked before a good Origin", "evil.com", `http://127.0.0.1:${P}`, true, [], HOST],
	];
	for (const [name, host, origin, loopback, allowed, want] of cases) {
		test(`${name} -> ${want.ok ? "ok" : (want as { code: string }).code}`, () => {
			expect(checkHostOrigin(host, origin, loopback, allowed)).toEqual(want);
		});
	}
});
