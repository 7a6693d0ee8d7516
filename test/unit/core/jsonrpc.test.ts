import { describe, expect, test } from "bun:test";
import type { RpcId } from "../../../src/core/errors.ts";
import { type EnvelopeParse, parseEnvelope, parseJsonBody, requestIdOf } from "../../../src/core/jsonrpc.ts";

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("parseJsonBody", () => {
	test("valid UTF-8 JSON object -> ok with the value", () => {
		expect(parseJsonBody(bytes('{"a":"é"}'))).toEqual({ ok: true, value: { a: "é" } });
	});
	test("JSON scalar -> ok (shape is checked by parseEnvelope)", () => {
		expect(parseJsonBody(bytes("42"))).toEqual({ ok: true, value: 42 });
	});
	test("invalid UTF-8 bytes [0xff, 0xfe] -> not ok", () => {
		expect(parseJsonBody(new Uint8Array([0xff, 0xfe]))).toEqual({ ok: false, why: "the body is not UTF-8" });
	});
	test("invalid UTF-8 inside a JSON string -> not ok (strict decoding)", () => {
		expect(parseJsonBody(new Uint8Array([0x22, 0xc3, 0x28, 0x22]))).toEqual({
			ok: false,
			why: "the body is not UTF-8",
		});
	});
	test("truncated JSON -> not ok", () => {
		expect(parseJsonBody(bytes('{"jsonrpc":"2.0","method":'))).toEqual({ ok: false, why: "the body is not JSON" });
	});
	test("empty body -> not ok", () => {
		expect(parseJsonBody(new Uint8Array(0))).toEqual({ ok: false, why: "the body is not JSON" });
	});
	test("plain text -> not ok", () => {
		expect(parseJsonBody(bytes("hello"))).toEqual({ ok: false, why: "the body is not JSON" });
	});
});

describe("parseEnvelope", () => {
	/** Refused, and the id its error answer echoes (`requestIdOf`). */
	const invalid = (id: RpcId | null) => ({ ok: false as const, id });
	const cases: Array<[string, unknown, Extract<EnvelopeParse, { ok: true }> | ReturnType<typeof invalid>]> = [
		[
			"request with params",
			{ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
			{ ok: true, value: { kind: "request", id: 1, method: "tools/list", params: {} } },
		],
		[
			"request with string id, no params",
			{ jsonrpc: "2.0", id: "a", method: "ping" },
			{ ok: true, value: { kind: "request", id: "a", method: "ping", params: undefined } },
		],
		[
			"request with id 0",
			{ jsonrpc: "2.0", id: 0, method: "ping" },
			{ ok: true, value: { kind: "request", id: 0, method: "ping", params: undefined } },
		],
		[
			"notification",
			{ jsonrpc: "2.0", method: "notifications/initialized" },
			{ ok: true, value: { kind: "notification", method: "notifications/initialized", params: undefined } },
		],
		[
			"notification with params",
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } },
			{ ok: true, value: { kind: "notification", method: "notifications/cancelled", params: { requestId: 3 } } },
		],
		["response with result", { jsonrpc: "2.0", id: 5, result: {} }, { ok: true, value: { kind: "response", id: 5 } }],
		[
			"response with error",
			{ jsonrpc: "2.0", id: "x", error: { code: 1, message: "m" } },
			{ ok: true, value: { kind: "response", id: "x" } },
		],
		["batch array", [{ jsonrpc: "2.0", id: 1, method: "ping" }], invalid(null)],
		["empty array", [], invalid(null)],
		["null", null, invalid(null)],
		["string", "ping", invalid(null)],
		["request with id null", { jsonrpc: "2.0", id: null, method: "ping" }, invalid(null)],
		["request with object id", { jsonrpc: "2.0", id: {}, method: "ping" }, invalid(null)],
		["request with boolean id", { jsonrpc: "2.0", id: true, method: "ping" }, invalid(null)],
		["jsonrpc 1.0", { jsonrpc: "1.0", id: 7, method: "ping" }, invalid(7)],
		["jsonrpc missing", { id: 7, method: "ping" }, invalid(7)],
		["jsonrpc as number 2", { jsonrpc: 2, id: 7, method: "ping" }, invalid(7)],
		["params array", { jsonrpc: "2.0", id: 8, method: "tools/call", params: ["a"] }, invalid(8)],
		["params string", { jsonrpc: "2.0", id: 8, method: "tools/call", params: "a" }, invalid(8)],
		["params null", { jsonrpc: "2.0", id: 8, method: "tools/call", params: null }, invalid(8)],
		["method number", { jsonrpc: "2.0", id: 9, method: 42 }, invalid(9)],
		["method empty", { jsonrpc: "2.0", id: 9, method: "" }, invalid(9)],
		["result and error both", { jsonrpc: "2.0", id: 10, result: {}, error: { code: 1 } }, invalid(10)],
		["neither method, result nor error", { jsonrpc: "2.0", id: 11 }, invalid(11)],
		["response without id", { jsonrpc: "2.0", result: {} }, invalid(null)],
	];
	for (const [name, value, want] of cases) {
		test(`${name} -> ${want.ok ? want.value.kind : "invalid"}`, () => {
			if (want.ok) expect(parseEnvelope(value)).toEqual(want);
			else {
				expect(parseEnvelope(value)).toEqual({ ok: false, why: expect.any(String) });
				expect(requestIdOf(value)).toBe(want.id);
			}
		});
	}
});
