/**
 * Tasks through `BridgeServer.handle` against a fake host (contract §17): the window, the task's
 * progress as `statusMessage`, and the hooks that end a token's tasks (rotation, revocation, stop). The
 * server runs on a clock the test moves: no test here waits on real time for the window.
 */
import { describe, expect, test } from "bun:test";
import { BridgeServer } from "../../../src/core/server.ts";
import type { ToolCallRequest } from "../../../src/core/types.ts";
import { type ManualClock, manualClock } from "../../helpers/clock.ts";

const OWNER = "task-unit-owner-token-0123456789abcdefghijk";
const CI = "task-unit-ci-token-0123456789abcdefghijklmnop";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const envelope = (declare: boolean) => ({
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientCapabilities": declare ? TASKS : {},
	"io.modelcontextprotocol/clientInfo": { name: "unit", version: "1" },
});

type Body = { result?: Record<string, unknown>; error?: { code: number } };
const WINDOW_MS = 20_000;

function harness() {
	const calls: ToolCallRequest[] = [];
	const clock = manualClock();
	const server = new BridgeServer(
		{
			version: "1",
			instructions: "unit",
			listTools: () => [],
			callTool: async req => {
				calls.push(req);
				if (req.args.wait !== true) return { content: [{ type: "text", text: "quick" }], isError: false };
				req.onProgress?.("building step 3");
				await new Promise(resolve => req.signal.addEventListener("abort", resolve, { once: true }));
				return { content: [{ type: "text", text: "aborted" }], isError: true };
			},
			log: () => {},
			clock,
		},
		{
			ownerSecret: OWNER,
			tokens: [{ name: "ci", token: CI }],
			bindHost: "127.0.0.1",
			isLoopbackBind: true,
			allowedOrigins: [],
			taskWindowMs: WINDOW_MS,
		},
	);
	return { server, calls, clock };
}

/** Yields (no time passes on the clock) until `ready`, bounded. */
async function until(ready: () => boolean): Promise<void> {
	for (let i = 0; i < 1000 && !ready(); i++) await Bun.sleep(0);
	expect(ready()).toBe(true);
}

async function rpc(
	server: BridgeServer,
	method: string,
	params: Record<string, unknown>,
	token = OWNER,
	declare = true,
): Promise<{ status: number; body: Body }> {
	const name = typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : null;
	const res = await server.handle(
		new Request("http://127.0.0.1:9/", {
			method: "POST",
			headers: {
				host: "127.0.0.1:9",
				authorization: `Bearer ${token}`,
				"content-type": "application/json",
				accept: "application/json",
				"mcp-protocol-version": "2026-07-28",
				"mcp-method": method,
				...(name ? { "mcp-name": name } : {}),
			},
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: envelope(declare) } }),
		}),
	);
	return { status: res.status, body: (await res.json()) as Body };
}

/** A declaring call still running when its window closes on the clock: answered with its task's id. */
async function start(h: { server: BridgeServer; clock: ManualClock }, token = OWNER): Promise<string> {
	const answer = rpc(h.server, "tools/call", { name: "bash", arguments: { wait: true } }, token);
	await until(() => h.clock.pending() > 0);
	h.clock.advance(WINDOW_MS - 1);
	expect(h.clock.pending()).toBe(1);
	h.clock.advance(1);
	return String((await answer).body.result?.taskId);
}

describe("tasks through handle()", () => {
	test("a declaring call that ends within the window gets its plain result; no task is kept", async () => {
		const h = harness();
		const r = await rpc(h.server, "tools/call", { name: "bash", arguments: {} });
		expect(r.body.result).toMatchObject({ resultType: "complete", content: [{ text: "quick" }] });
		expect(h.server.inFlight.size).toBe(0);
	});
	test("a running task shows the call's latest output as statusMessage; /a2a's call carries the task id", async () => {
		const h = harness();
		const id = await start(h);
		const got = await rpc(h.server, "tasks/get", { taskId: id });
		expect(got.body.result).toMatchObject({ status: "working", statusMessage: "building step 3" });
		expect([...h.server.inFlight.values()].map(c => c.task)).toEqual([id]);
		h.server.cancelTasks();
	});
	test("rotating a token ends its tasks: the call is aborted and the id is unknown to the new secret", async () => {
		const h = harness();
		const mine = await start(h, CI);
		const owners = await start(h);
		h.server.setToken("ci", `${CI}-rotated`);
		expect(h.calls[0]?.signal.aborted).toBe(true);
		expect((await rpc(h.server, "tasks/get", { taskId: mine }, `${CI}-rotated`)).body.error?.code).toBe(-32602);
		expect(h.calls[1]?.signal.aborted).toBe(false);
		expect((await rpc(h.server, "tasks/get", { taskId: owners })).body.result?.status).toBe("working");
		h.server.cancelTasks();
	});
	test("revoking a token cancels its running tasks; stopping the endpoint cancels the rest", async () => {
		const h = harness();
		await start(h, CI);
		const owners = await start(h);
		expect(h.server.revokeToken("ci")).toBe(true);
		expect(h.calls[0]?.signal.aborted).toBe(true);
		expect(h.calls[1]?.signal.aborted).toBe(false);
		h.server.cancelTasks();
		expect(h.calls[1]?.signal.aborted).toBe(true);
		expect((await rpc(h.server, "tasks/get", { taskId: owners })).body.result?.status).toBe("cancelled");
	});
	test("2025-era calls and non-declaring 2026 calls never become tasks", async () => {
		const h = harness();
		const pending = rpc(h.server, "tools/call", { name: "bash", arguments: { wait: true } }, OWNER, false);
		await until(() => h.calls.length === 1);
		// No window was ever timed for it; far past one it is still a plain call, with no task id.
		expect(h.clock.pending()).toBe(0);
		h.clock.advance(10 * WINDOW_MS);
		await Bun.sleep(0);
		expect([...h.server.inFlight.values()].map(c => c.task)).toEqual([undefined]);
		h.server.cancelAll();
		expect((await pending).body.error?.code).toBe(-32800);
	});
});
