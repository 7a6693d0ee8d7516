/**
 * The 2026-07-28 era through `BridgeServer.handle` against a fake host: no session, results carry the
 * era's members, keep-alives on a silent SSE call, and the request's signal as the cancel (only here).
 */
import { describe, expect, test } from "bun:test";
import { BridgeServer } from "../../../src/core/server.ts";
import type { CallAudit, Clock, ServerOptions, ToolCallRequest } from "../../../src/core/types.ts";
import { pushableBody } from "../../helpers/body.ts";
import { manualClock } from "../../helpers/clock.ts";
import { waitFor } from "../../helpers/wait.ts";

const TOKEN = "modern-unit-token-0123456789abcdefghijklmn";
const URL_ = "http://127.0.0.1:9/";
const ENVELOPE = {
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientCapabilities": {},
	"io.modelcontextprotocol/clientInfo": { name: "unit-client", version: "1" },
};

type Done = Parameters<CallAudit["done"]>[0];

function harness(sse?: ServerOptions["sse"], clock?: Clock) {
	const calls: ToolCallRequest[] = [];
	const dones: Done[] = [];
	const server = new BridgeServer(
		{
			version: "1.2.3",
			instructions: "unit",
			listTools: () => [{ name: "read", description: "r", inputSchema: { type: "object" } }],
			callTool: async req => {
				calls.push(req);
				if (req.args.wait !== true) return { content: [{ type: "text", text: "ok" }], isError: false };
				// Runs until aborted, like a long command.
				await new Promise(resolve => req.signal.addEventListener("abort", resolve, { once: true }));
				return { content: [{ type: "text", text: "aborted" }], isError: true };
			},
			audit: { start: async () => {}, done: async c => void dones.push(c) },
			log: () => {},
			...(clock ? { clock } : {}),
		},
		{ ownerSecret: TOKEN, bindHost: "127.0.0.1", isLoopbackBind: true, allowedOrigins: [], ...(sse ? { sse } : {}) },
	);
	return { server, calls, dones };
}

function modern(method: string, params: Record<string, unknown> = {}, extra: RequestInit & { id?: number } = {}) {
	const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
	return new Request(URL_, {
		method: "POST",
		headers: {
			host: "127.0.0.1:9",
			authorization: `Bearer ${TOKEN}`,
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			"mcp-protocol-version": "2026-07-28",
			"mcp-method": method,
			...name,
		},
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: extra.id ?? 1,
			method,
			params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } },
		}),
		...(extra.signal ? { signal: extra.signal } : {}),
		...(extra.body ? { body: extra.body, duplex: "half" } : {}),
	});
}

describe("2026-07-28: identity after the body (contract §16, issue 20 item 3)", () => {
	test("the secret rotated while the body is on its way -> 401 invalid_token, the tool not called", async () => {
		const h = harness();
		const text = JSON.stringify({
			jsonrpc: "2.0",
			id: 3,
			method: "tools/call",
			params: { name: "read", arguments: {}, _meta: ENVELOPE },
		});
		const { body, push, end } = pushableBody();
		const req = modern("tools/call", { name: "read", arguments: {} }, { body });
		const answer = h.server.handle(req);
		push(text.slice(0, 20));
		h.server.setToken("owner", `${TOKEN}-rotated`);
		push(text.slice(20));
		end();
		const res = await answer;
		expect(res.status).toBe(401);
		expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
		expect(h.calls).toEqual([]);
	});
});

describe("2026-07-28 through handle()", () => {
	test("tools/call without a string name or with non-object arguments -> HTTP 400 -32602, the tool not called", async () => {
		const h = harness();
		for (const params of [{ arguments: {} }, { name: "read", arguments: [] }, { name: "read", arguments: "x" }]) {
			const res = await h.server.handle(modern("tools/call", params));
			expect(res.status).toBe(400);
			expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32602);
		}
		expect(h.calls).toEqual([]);
	});

	test("tools/call needs no session; the result carries resultType and serverInfo; audit sid null, client named", async () => {
		const h = harness();
		const res = await h.server.handle(modern("tools/call", { name: "read", arguments: {} }));
		expect(res.status).toBe(200);
		const body = (await res.json()) as { result: Record<string, unknown> };
		expect(body.result).toEqual({
			content: [{ type: "text", text: "ok" }],
			isError: false,
			resultType: "complete",
			_meta: { "io.modelcontextprotocol/serverInfo": { name: "omp-a2a-bridge", version: "1.2.3" } },
		});
		expect(h.calls[0]?.caller.sid).toBeNull();
		expect(h.dones[0]).toMatchObject({ sid: null, client: "unit-client" });
		expect(h.server.sessions.size).toBe(0);
	});

	test("two calls with the same JSON-RPC id run side by side (no session, so ids are not keys)", async () => {
		const h = harness();
		const a = new AbortController();
		const b = new AbortController();
		const first = h.server.handle(
			modern("tools/call", { name: "read", arguments: { wait: true } }, { id: 7, signal: a.signal }),
		);
		const second = h.server.handle(
			modern("tools/call", { name: "read", arguments: { wait: true } }, { id: 7, signal: b.signal }),
		);
		await waitFor("two calls in flight", () => h.server.inFlight.size === 2);
		a.abort();
		b.abort();
		await Promise.all([first, second]);
		expect(h.calls.length).toBe(2);
	});

	test("the request's signal aborting cancels the call: the tool's signal aborts, done has cancelled:true", async () => {
		const h = harness();
		const ac = new AbortController();
		const pending = h.server.handle(
			modern("tools/call", { name: "read", arguments: { wait: true } }, { signal: ac.signal }),
		);
		await waitFor("call started", () => h.calls.length === 1);
		ac.abort();
		await pending;
		expect(h.calls[0]?.signal.aborted).toBe(true);
		expect(h.dones[0]).toMatchObject({ cancelled: true, sid: null });
		expect(h.server.inFlight.size).toBe(0);
	});

	test("the 2025 era ignores the request's signal: a disconnect is not a cancel", async () => {
		const h = harness();
		const init = await h.server.handle(
			new Request(URL_, {
				method: "POST",
				headers: { host: "127.0.0.1:9", authorization: `Bearer ${TOKEN}` },
				body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} }),
			}),
		);
		const sid = init.headers.get("mcp-session-id") ?? "";
		const ac = new AbortController();
		const pending = h.server.handle(
			new Request(URL_, {
				method: "POST",
				headers: { host: "127.0.0.1:9", authorization: `Bearer ${TOKEN}`, "mcp-session-id": sid },
				body: JSON.stringify({
					jsonrpc: "2.0",
					id: 1,
					method: "tools/call",
					params: { name: "read", arguments: { wait: true } },
				}),
				signal: ac.signal,
			}),
		);
		await waitFor("call started", () => h.calls.length === 1);
		ac.abort();
		// The bridge saw the disconnect (the call is marked abandoned), and still did not cancel.
		await waitFor("the disconnect noted on the call", () => [...h.server.inFlight.values()][0]?.abandoned === true);
		expect(h.calls[0]?.signal.aborted).toBe(false);
		h.server.cancelAll();
		await pending;
	});

	test("a silent SSE call gets keep-alive comments until it ends (on the server's clock, no real wait)", async () => {
		const clock = manualClock();
		const h = harness({ keepaliveMs: 20, heartbeatMs: 60_000 }, clock);
		const ac = new AbortController();
		const res = await h.server.handle(
			modern(
				"tools/call",
				{ name: "read", arguments: { wait: true }, _meta: { progressToken: "k" } },
				{ signal: ac.signal },
			),
		);
		expect(res.headers.get("content-type")).toStartWith("text/event-stream");
		// The stream's ticker runs on the clock handed to the server (BridgeDeps.clock).
		expect(clock.pending()).toBeGreaterThan(0);
		clock.advance(19);
		const reader = res.body?.getReader();
		const opened = new TextDecoder().decode((await reader?.read())?.value);
		expect(opened).not.toContain(": keepalive");
		clock.advance(1);
		let text = "";
		const decoder = new TextDecoder();
		while (!text.includes(": keepalive")) {
			const chunk = await reader?.read();
			if (!chunk || chunk.done) break;
			text += decoder.decode(chunk.value);
		}
		expect(text).toContain(": keepalive");
		ac.abort();
		await reader?.cancel();
		await waitFor("cancelled done", () => h.dones.length === 1);
		expect(h.dones[0]?.cancelled).toBe(true);
	});
});
