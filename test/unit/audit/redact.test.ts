import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ARGS_MAX_CHARS, LEAF_MAX_CHARS, MAX_DEPTH, redactArgs } from "../../../src/audit/redact.ts";

const sha8 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex").slice(0, 8);

/** Nested `{a: {a: ... leaf}}` with `levels` objects around the leaf. */
function nest(levels: number, leaf: unknown): unknown {
	let v = leaf;
	for (let i = 0; i < levels; i++) v = { a: v };
	return v;
}

describe("limits", () => {
	test("defaults -> 1024-char args, 120-char leaves, depth 32", () => {
		expect(ARGS_MAX_CHARS).toBe(1024);
		expect(LEAF_MAX_CHARS).toBe(120);
		expect(MAX_DEPTH).toBe(32);
	});
});

describe("redactArgs", () => {
	const s120 = "a".repeat(120);
	const s121 = "b".repeat(121);
	const s500 = "x".repeat(500);
	const cases: Array<[string, unknown, string]> = [
		["empty object", {}, "{}"],
		["short string kept", { command: "ls -la" }, '{"command":"ls -la"}'],
		["120-char string kept (boundary)", { s: s120 }, JSON.stringify({ s: s120 })],
		["121-char string hashed", { s: s121 }, JSON.stringify({ s: `<len:121,sha256:${sha8(s121)}>` })],
		["numbers, booleans, null kept", { n: 1.5, b: true, z: null }, '{"n":1.5,"b":true,"z":null}'],
		[
			"long string at depth 3 hashed",
			{ edits: [{ body: s500 }] },
			JSON.stringify({ edits: [{ body: `<len:500,sha256:${sha8(s500)}>` }] }),
		],
		[
			"long string as an array element hashed",
			{ list: ["ok", s121] },
			JSON.stringify({ list: ["ok", `<len:121,sha256:${sha8(s121)}>`] }),
		],
		["top-level long string hashed", s121, JSON.stringify(`<len:121,sha256:${sha8(s121)}>`)],
		["BigInt -> its digits", { n: 10n }, '{"n":"10"}'],
		["function dropped", { f: () => 1, k: 1 }, '{"k":1}'],
		["undefined -> null", undefined, "null"],
	];
	for (const [name, value, want] of cases) {
		test(`${name} -> ${want.length > 60 ? `${want.slice(0, 60)}…` : want}`, () => {
			expect(redactArgs(value)).toBe(want);
		});
	}

	test("multi-byte 121-char string -> digest of its UTF-8 bytes", () => {
		const s = "é".repeat(121);
		expect(redactArgs({ s })).toBe(JSON.stringify({ s: `<len:121,sha256:${sha8(s)}>` }));
	});

	test("object nested 40 deep -> contains <max-depth>", () => {
		const out = redactArgs(nest(40, { leaf: 1 }));
		expect(out).toContain("<max-depth>");
		expect(out).not.toContain("leaf");
	});

	test("object 32 levels below the arguments -> kept; 33 levels below -> <max-depth>", () => {
		// nest(32, {leaf}) puts {leaf} 32 levels below the top object.
		expect(redactArgs(nest(32, { leaf: 1 }))).toContain('"leaf":1');
		const deeper = redactArgs(nest(33, { leaf: 1 }));
		expect(deeper).toContain("<max-depth>");
		expect(deeper).not.toContain("leaf");
	});

	test("serialized over 1024 chars -> cut to 1024 + …", () => {
		const args = { items: Array.from({ length: 100 }, (_, i) => `item-${i}-${"z".repeat(20)}`) };
		const full = JSON.stringify(args);
		expect(full.length).toBeGreaterThan(1024);
		const out = redactArgs(args);
		expect(out.length).toBe(1025);
		expect(out).toBe(`${full.slice(0, 1024)}…`);
	});

	test("serialized exactly 1024 chars -> kept whole", () => {
		// {"l":[ 9 x 100-char strings, 1 x 87-char string ]} = 7 + 9 * 103 + 90 = 1024 chars
		const args = { l: [...Array.from({ length: 9 }, () => "r".repeat(100)), "r".repeat(87)] };
		expect(JSON.stringify(args).length).toBe(1024);
		expect(redactArgs(args)).toBe(JSON.stringify(args));
	});

	test("circular value -> still a string, marked <circular>", () => {
		const a: Record<string, unknown> = { name: "loop" };
		a.self = a;
		const out = redactArgs(a);
		expect(typeof out).toBe("string");
		expect(out).toContain("<circular>");
		expect(out).toContain('"name":"loop"');
	});

	test("shared (non-circular) object referenced twice -> both copies kept", () => {
		const shared = { v: 1 };
		expect(redactArgs({ a: shared, b: shared })).toBe('{"a":{"v":1},"b":{"v":1}}');
	});

	test("BigInt at top level -> still a string", () => {
		expect(redactArgs(123n)).toBe('"123"');
	});

	test("object whose getter throws -> still a string", () => {
		const evil = {
			get boom(): string {
				throw new Error("nope");
			},
		};
		expect(typeof redactArgs(evil)).toBe("string");
	});
});
