import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MAX_CLIENT_NAME } from "../../../src/core/client-name.ts";
import { eraOf, SERVED_VERSIONS, unsupportedData } from "../../../src/core/facts.ts";
import {
	checkModernRequest,
	decodeHeaderValue,
	META_CAPABILITIES,
	META_CLIENT_INFO,
	META_VERSION,
	type RoutingHeaders,
} from "../../../src/core/modern-parse.ts";

const b64 = (s: string): string => `=?base64?${Buffer.from(s, "utf8").toString("base64")}?=`;
const meta = (extra: Record<string, unknown> = {}) => ({
	[META_VERSION]: "2026-07-28",
	[META_CAPABILITIES]: {},
	...extra,
});
const heads = (method: string, name: string | null = null, version: string | null = "2026-07-28"): RoutingHeaders => ({
	version,
	method,
	name,
});

describe("eraOf", () => {
	test("absent header -> legacy (the 2025 default)", () => expect(eraOf(null)).toBe("legacy"));
	for (const v of ["2025-03-26", "2025-06-18", "2025-11-25", " 2025-11-25 "]) {
		test(`${JSON.stringify(v)} -> legacy`, () => expect(eraOf(v)).toBe("legacy"));
	}
	test("2026-07-28 -> modern", () => expect(eraOf("2026-07-28")).toBe("modern"));
	for (const v of ["2024-11-05", "2027-01-01", "", "2026-07-28, 2026-07-28", "2026-07-28\u0000", "latest"]) {
		test(`${JSON.stringify(v)} -> unsupported`, () => expect(eraOf(v)).toBe("unsupported"));
	}
	test("any string -> one of the three eras, never a throw", () => {
		fc.assert(fc.property(fc.string(), s => ["legacy", "modern", "unsupported"].includes(eraOf(s))));
	});
});

describe("unsupportedData", () => {
	test("names every served version (2025 list plus 2026-07-28) and echoes the request", () => {
		expect(unsupportedData("2099-01-01")).toEqual({
			supported: ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"],
			requested: "2099-01-01",
		});
		expect(SERVED_VERSIONS).toContain("2026-07-28");
	});
});

describe("decodeHeaderValue", () => {
	test("plain value -> verbatim", () => expect(decodeHeaderValue("tools/call")).toBe("tools/call"));
	test("null -> null", () => expect(decodeHeaderValue(null)).toBeNull());
	test("base64 sentinel -> the UTF-8 text", () => expect(decodeHeaderValue(b64("héllo 工具"))).toBe("héllo 工具"));
	test("empty sentinel -> empty string", () => expect(decodeHeaderValue("=?base64??=")).toBe(""));
	test("bad base64 characters -> null", () => expect(decodeHeaderValue("=?base64?a$b=?=")).toBeNull());
	test("missing padding -> null", () => expect(decodeHeaderValue("=?base64?YWI?=")).toBeNull());
	test("non-canonical trailing bits (YWJ= for 'ab') -> null", () => {
		expect(decodeHeaderValue("=?base64?YWI=?=")).toBe("ab");
		expect(decodeHeaderValue("=?base64?YWJ=?=")).toBeNull();
	});
	test("invalid UTF-8 inside -> null", () => {
		expect(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString("base64")}?=`)).toBeNull();
	});
	test("half a sentinel -> verbatim (not a sentinel)", () => {
		expect(decodeHeaderValue("=?base64?YWI=")).toBe("=?base64?YWI=");
	});
	test("encoding any string then decoding gives it back", () => {
		fc.assert(fc.property(fc.string({ unit: "grapheme" }), s => decodeHeaderValue(b64(s)) === s));
	});
	test("any header value -> a string or null, never a throw", () => {
		fc.assert(fc.property(fc.string(), s => decodeHeaderValue(`=?base64?${s}?=`) !== undefined));
	});
});

describe("checkModernRequest", () => {
	test("complete envelope and matching headers -> ok, client name taken from clientInfo", () => {
		const params = { _meta: meta({ [META_CLIENT_INFO]: { name: "py-sdk", version: "2.3.0" } }) };
		expect(checkModernRequest("tools/list", params, heads("tools/list"))).toEqual({ ok: true, client: "py-sdk" });
	});
	test("no clientInfo -> ok with client null (it is optional)", () => {
		expect(checkModernRequest("server/discover", { _meta: meta() }, heads("server/discover"))).toEqual({
			ok: true,
			client: null,
		});
	});
	for (const [what, params] of [
		["no params", undefined],
		["no _meta", {}],
		["_meta an array", { _meta: [] }],
		["_meta null", { _meta: null }],
		["no protocolVersion", { _meta: { [META_CAPABILITIES]: {} } }],
		["no clientCapabilities", { _meta: { [META_VERSION]: "2026-07-28" } }],
	] as const) {
		test(`${what} -> envelope_invalid (-32602)`, () => {
			expect(checkModernRequest("tools/list", params, heads("tools/list"))).toEqual({
				ok: false,
				code: "envelope_invalid",
				why: expect.any(String),
			});
		});
	}
	const mismatch = { ok: false, code: "header_mismatch", why: expect.any(String) } as const;
	const mismatchOf = (header: string) => ({
		ok: false as const,
		code: "header_mismatch" as const,
		why: `${header} does not match the body`,
	});
	test("envelope version differs from the header -> header_mismatch naming the version header", () => {
		const params = { _meta: meta({ [META_VERSION]: "2025-11-25" }) };
		expect(checkModernRequest("tools/list", params, heads("tools/list"))).toEqual(mismatchOf("MCP-Protocol-Version"));
	});
	test("the ladder's first failing rung answers: a wrong version before a wrong Mcp-Method", () => {
		const params = { _meta: meta({ [META_VERSION]: "2025-11-25" }) };
		expect(checkModernRequest("tools/list", params, heads("tools/call"))).toEqual(mismatchOf("MCP-Protocol-Version"));
		expect(checkModernRequest("tools/list", { _meta: meta() }, heads("tools/call"))).toEqual(mismatchOf("Mcp-Method"));
	});
	test("envelope version a number -> header_mismatch", () => {
		const params = { _meta: meta({ [META_VERSION]: 20260728 }) };
		expect(checkModernRequest("tools/list", params, heads("tools/list"))).toEqual(mismatch);
	});
	test("Mcp-Method missing -> header_mismatch", () => {
		expect(
			checkModernRequest("tools/list", { _meta: meta() }, { version: "2026-07-28", method: null, name: null }),
		).toEqual(mismatch);
	});
	test("Mcp-Method different -> header_mismatch", () => {
		expect(checkModernRequest("tools/list", { _meta: meta() }, heads("tools/call"))).toEqual(mismatch);
	});
	test("Mcp-Method differing only in case -> header_mismatch (methods are case-sensitive)", () => {
		expect(checkModernRequest("tools/list", { _meta: meta() }, heads("Tools/List"))).toEqual(mismatch);
	});
	test("Mcp-Method in base64 form -> ok", () => {
		expect(checkModernRequest("tools/list", { _meta: meta() }, heads(b64("tools/list"))).ok).toBe(true);
	});
	for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
		const p = { taskId: "AbC-_123", _meta: meta() };
		test(`${method}: Mcp-Name must equal params.taskId (missing, other, base64 of it)`, () => {
			expect(checkModernRequest(method, p, heads(method, "AbC-_123")).ok).toBe(true);
			expect(checkModernRequest(method, p, heads(method, b64("AbC-_123"))).ok).toBe(true);
			expect(checkModernRequest(method, p, heads(method))).toEqual(mismatch);
			expect(checkModernRequest(method, p, heads(method, "abc-_123"))).toEqual(mismatch);
		});
	}
	const call = { name: "read", arguments: {}, _meta: meta() };
	test("tools/call with Mcp-Name equal to params.name -> ok", () => {
		expect(checkModernRequest("tools/call", call, heads("tools/call", "read")).ok).toBe(true);
	});
	test("tools/call without Mcp-Name -> header_mismatch", () => {
		expect(checkModernRequest("tools/call", call, heads("tools/call"))).toEqual(mismatch);
	});
	test("tools/call with another Mcp-Name -> header_mismatch", () => {
		expect(checkModernRequest("tools/call", call, heads("tools/call", "bash"))).toEqual(mismatch);
	});
	test("tools/call with a non-ASCII name in base64 form -> ok; verbatim or malformed -> mismatch", () => {
		const p = { ...call, name: "outil é" };
		expect(checkModernRequest("tools/call", p, heads("tools/call", b64("outil é"))).ok).toBe(true);
		expect(checkModernRequest("tools/call", p, heads("tools/call", "=?base64?!!?="))).toEqual(mismatch);
	});
	test("Mcp-Name on another method is not compared", () => {
		expect(checkModernRequest("tools/list", { _meta: meta() }, heads("tools/list", "whatever")).ok).toBe(true);
	});
	test("a hostile clientInfo name is cut to the bound; non-string names are dropped", () => {
		const long = { _meta: meta({ [META_CLIENT_INFO]: { name: "x".repeat(100_000) } }) };
		const r = checkModernRequest("tools/list", long, heads("tools/list"));
		// Bounded and made safe to show by the same rule as the 2025 era's clientInfo (core/client-name.ts).
		expect(r.ok && r.client).toBe(`${"x".repeat(MAX_CLIENT_NAME)}…`);
		for (const info of [{ name: 42 }, "name", null, [], { name: "" }]) {
			const p = { _meta: meta({ [META_CLIENT_INFO]: info }) };
			expect(checkModernRequest("tools/list", p, heads("tools/list"))).toEqual({ ok: true, client: null });
		}
	});
});
