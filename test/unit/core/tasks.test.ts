import { describe, expect, test } from "bun:test";
import { declaresTasks, parseTaskParams } from "../../../src/core/task-parse.ts";
import { answerOrTask, detachable, taskMethod } from "../../../src/core/task-route.ts";
import { newTaskId, TASK_WINDOW_MS, TaskStore, taskWindowMs } from "../../../src/core/tasks.ts";
import type { ToolCallOutcome } from "../../../src/core/types.ts";

const declared = {
	_meta: { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } },
};

function store(limits = {}) {
	let t = 1_000_000;
	const s = new TaskStore({ now: () => t, limits });
	const cancelled: string[] = [];
	const make = (owner: string, id = newTaskId()) => {
		expect(s.create(id, { owner, client: "c", tool: "bash", cancel: r => cancelled.push(`${id}:${r}`) })).toEqual({
			taskId: id,
		});
		return id;
	};
	return { s, make, cancelled, advance: (ms: number) => (t += ms) };
}

const done = (text: string) => ({
	status: "completed" as const,
	result: { content: [{ type: "text", text }], isError: false },
});

describe("task ids", () => {
	test("144 random bits as base64url, header-safe, never repeated in 10 000 draws", () => {
		const ids = new Set(Array.from({ length: 10_000 }, newTaskId));
		expect(ids.size).toBe(10_000);
		for (const id of [...ids].slice(0, 50)) {
			expect(id).toMatch(/^[A-Za-z0-9_-]{24}$/);
			expect(Buffer.from(id, "base64url").byteLength).toBe(18);
		}
	});
	test("the window is at most 2 s (contract §17)", () => {
		expect(TASK_WINDOW_MS).toBeLessThanOrEqual(2000);
	});
	test("hostile window knob values: never above TASK_WINDOW_MS, never below 0, junk -> the default", () => {
		for (const [asked, want] of [
			[undefined, TASK_WINDOW_MS],
			[Number.NaN, TASK_WINDOW_MS],
			[Number.POSITIVE_INFINITY, TASK_WINDOW_MS],
			[1e12, TASK_WINDOW_MS],
			[-5, 0],
			[0, 0],
			[300, 300],
		] as const) {
			expect(taskWindowMs(asked)).toBe(want);
		}
	});
});

describe("TaskStore: ownership", () => {
	test("a task answers only to its token: another token's view and cancel are as for an unknown id, and change nothing", () => {
		const { s, make, cancelled } = store();
		const id = make("ci");
		expect(s.view("other", id)).toBeUndefined();
		expect(s.cancel("other", id)).toBe(false);
		expect(cancelled).toEqual([]);
		expect(s.view("ci", id)?.status).toBe("working");
		expect(s.view("ci", "no-such-id")).toBeUndefined();
	});
	test("revoking a token cancels its running tasks and forgets all of them; other tokens are untouched", () => {
		const { s, make, cancelled } = store();
		const a = make("ci");
		const b = make("ci");
		s.finish(b, done("ok"));
		const c = make("owner");
		expect(s.endOwner("ci", "revoked")).toBe(2);
		expect(cancelled).toEqual([`${a}:revoked`]);
		expect(s.view("ci", a)).toBeUndefined();
		expect(s.view("ci", b)).toBeUndefined();
		expect(s.view("owner", c)?.status).toBe("working");
	});
});

describe("TaskStore: life of a task", () => {
	test("completed inlines the result; a later end (cancel, revoke) does not overwrite the first", () => {
		const { s, make, cancelled } = store();
		const id = make("owner");
		s.finish(id, done("hello"));
		expect(s.view("owner", id)).toMatchObject({ status: "completed", result: { content: [{ text: "hello" }] } });
		expect(s.cancel("owner", id)).toBe(true);
		expect(cancelled).toEqual([]);
		s.finish(id, { status: "cancelled" });
		expect(s.view("owner", id)?.status).toBe("completed");
	});
	test("cancel of a running task stops its work once and reports cancelled", () => {
		const { s, make, cancelled } = store();
		const id = make("owner");
		expect(s.cancel("owner", id)).toBe(true);
		expect(s.cancel("owner", id)).toBe(true);
		expect(cancelled).toEqual([`${id}:cancelled by tasks/cancel`]);
		expect(s.view("owner", id)).toMatchObject({ status: "cancelled" });
		expect(s.running()).toEqual([]);
	});
	test("failed carries the JSON-RPC error and no result", () => {
		const { s, make } = store();
		const id = make("owner");
		s.finish(id, { status: "failed", error: { code: -32603, message: "internal error" } });
		const v = s.view("owner", id);
		expect(v).toMatchObject({ status: "failed", error: { code: -32603, message: "internal error" } });
		expect(v && "result" in v).toBe(false);
	});
	test("progress shows as statusMessage, cut to its tail; gone once the task ends", () => {
		const { s, make } = store();
		const id = make("owner");
		s.progress(id, `${"x".repeat(2000)}END`);
		const msg = String(s.view("owner", id)?.statusMessage);
		expect(msg.endsWith("END")).toBe(true);
		expect(msg.length).toBeLessThanOrEqual(501);
		s.finish(id, done("ok"));
		expect(s.view("owner", id)?.statusMessage).toBeUndefined();
	});
	test("wire fields: ISO timestamps, integer ttlMs and pollIntervalMs, no v1 names", () => {
		const { s, make } = store();
		const v = s.view("owner", make("owner")) ?? {};
		expect(new Date(String(v.createdAt)).toISOString()).toBe(String(v.createdAt));
		expect(Number.isInteger(v.ttlMs)).toBe(true);
		expect(Number.isInteger(v.pollIntervalMs)).toBe(true);
		expect("ttl" in v || "pollInterval" in v).toBe(false);
	});
});

describe("TaskStore: retention and bounds", () => {
	test("a finished task is dropped after its ttlMs; a running one is never dropped; a late result is kept keepAfterEndMs", () => {
		const { s, make, advance } = store({ ttlMs: 1000, keepAfterEndMs: 500 });
		const quick = make("owner");
		const slow = make("owner");
		s.finish(quick, done("a"));
		advance(1001);
		expect(s.view("owner", quick)).toBeUndefined();
		expect(s.view("owner", slow)?.status).toBe("working");
		advance(5000);
		s.finish(slow, done("b"));
		expect(s.view("owner", slow)?.ttlMs).toBe(6001 + 500);
		advance(499);
		expect(s.view("owner", slow)?.status).toBe("completed");
		advance(2);
		expect(s.view("owner", slow)).toBeUndefined();
	});
	test("count bound: the oldest finished task is evicted first, and says so as failed", () => {
		const { s, make } = store({ maxPerToken: 2 });
		const a = make("ci");
		const b = make("ci");
		s.finish(a, done("a"));
		s.finish(b, done("b"));
		const c = make("ci");
		expect(s.view("ci", a)).toMatchObject({ status: "failed", error: { code: -32603 } });
		expect(String(s.view("ci", a)?.statusMessage)).toContain("evicted");
		expect(s.view("ci", b)?.status).toBe("completed");
		expect(s.view("ci", c)?.status).toBe("working");
		// Another token's bound is its own.
		make("owner");
		make("owner");
		expect(s.view("ci", b)?.status).toBe("completed");
	});
	test("count bound with every task running: no new task (the call stays a plain call)", () => {
		const { s, make } = store({ maxPerToken: 2 });
		make("ci");
		make("ci");
		expect(s.create(newTaskId(), { owner: "ci", client: null, tool: "bash", cancel: () => {} })).toBeNull();
	});
	test("byte bound: oldest results evicted until the token's kept bytes fit", () => {
		const { s, make } = store({ maxBytesPerToken: 3000 });
		const ids = [make("ci"), make("ci"), make("ci")];
		for (const id of ids) s.finish(id, done("y".repeat(1200)));
		expect(s.view("ci", ids[0] as string)?.status).toBe("failed");
		expect(s.view("ci", ids[1] as string)?.status).toBe("completed");
		expect(s.view("ci", ids[2] as string)?.status).toBe("completed");
	});
	test("tombstones are bounded too: at most maxPerToken of them", () => {
		const { s, make } = store({ maxPerToken: 2 });
		const all: string[] = [];
		for (let i = 0; i < 10; i++) {
			const id = make("ci");
			s.finish(id, done(String(i)));
			all.push(id);
		}
		expect(s.size).toBeLessThanOrEqual(4);
	});
	test("shutdown cancels every running task", () => {
		const { s, make, cancelled } = store();
		make("a");
		make("b");
		s.cancelAll("stopped");
		expect(cancelled.length).toBe(2);
		expect(s.running()).toEqual([]);
	});
});

describe("task-parse", () => {
	test("declaration is per request, an object under clientCapabilities.extensions", () => {
		expect(declaresTasks(declared)).toBe(true);
		expect(declaresTasks(undefined)).toBe(false);
		expect(declaresTasks({ _meta: {} })).toBe(false);
		expect(
			declaresTasks({
				_meta: {
					"io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": true } },
				},
			}),
		).toBe(false);
		expect(declaresTasks({ _meta: { "io.modelcontextprotocol/clientCapabilities": { extensions: [] } } })).toBe(false);
	});
	test("hostile params: missing, empty, non-string, huge taskId; non-object inputResponses", () => {
		for (const p of [undefined, {}, { taskId: "" }, { taskId: 7 }, { taskId: ["x"] }, { taskId: "x".repeat(257) }]) {
			expect(parseTaskParams("tasks/get", p as Record<string, unknown> | undefined).ok).toBe(false);
		}
		expect(parseTaskParams("tasks/update", { taskId: "a", inputResponses: 3 }).ok).toBe(false);
		expect(parseTaskParams("tasks/update", { taskId: "a", inputResponses: {} })).toEqual({ ok: true, taskId: "a" });
	});
});

describe("task-route", () => {
	const extra = { resultType: "complete" };
	const call = (run: Promise<ToolCallOutcome | null>, answered: () => void = () => {}) => ({
		id: 1,
		owner: "owner",
		client: null,
		tool: "t",
		run,
		answer: (o: ToolCallOutcome | null) => new Response(JSON.stringify({ plain: o })),
		result: (o: ToolCallOutcome) => ({ content: o.content, isError: o.isError }),
		cancel: () => {},
		output: () => "",
		answered,
		log: () => {},
		extra,
	});
	test("a call that ends within the window gets its plain answer; no task is made", async () => {
		const s = new TaskStore();
		const res = await answerOrTask(
			{ taskId: "t1", windowMs: 200, store: s, detach: () => {} },
			call(Promise.resolve({ content: [], isError: false })),
		);
		expect(await res.json()).toEqual({ plain: { content: [], isError: false } });
		expect(s.size).toBe(0);
	});
	test("a call still running after the window gets the flat handle; the bridge's own failure ends it failed -32603", async () => {
		const s = new TaskStore();
		let fail: (e: Error) => void = () => {};
		let detached = false;
		let answered = false;
		const run = new Promise<ToolCallOutcome | null>((_, reject) => {
			fail = reject;
		});
		const res = await answerOrTask(
			{ taskId: "t2", windowMs: 10, store: s, detach: () => (detached = true) },
			call(run, () => (answered = true)),
		);
		const body = (await res.json()) as { result: Record<string, unknown> };
		expect(body.result).toMatchObject({ resultType: "task", taskId: "t2", status: "working" });
		expect("task" in body.result || "result" in body.result).toBe(false);
		expect(detached && answered).toBe(true);
		fail(new Error("boom"));
		await Bun.sleep(0);
		expect(s.view("owner", "t2")).toMatchObject({ status: "failed", error: { code: -32603 } });
	});
	test("a tool error that ends after the window is completed with isError, not failed", async () => {
		const s = new TaskStore();
		let end: (o: ToolCallOutcome) => void = () => {};
		const run = new Promise<ToolCallOutcome | null>(resolve => {
			end = resolve;
		});
		await answerOrTask({ taskId: "t3", windowMs: 5, store: s, detach: () => {} }, call(run));
		end({ content: [{ type: "text", text: "exit 3" }], isError: true });
		await Bun.sleep(0);
		expect(s.view("owner", "t3")).toMatchObject({ status: "completed", result: { isError: true } });
	});
	test("tasks/* without the declaration -> -32021 with requiredCapabilities; unknown id -> -32602; other token same", async () => {
		const s = new TaskStore();
		s.create("mine", { owner: "owner", client: null, tool: "t", cancel: () => {} });
		const msg = (method: string, params: Record<string, unknown>) => ({ id: 5, method, params });
		const undeclared = taskMethod(s, "owner", msg("tasks/get", { taskId: "mine" }), extra);
		expect(undeclared.status).toBe(400);
		expect(((await undeclared.json()) as { error: unknown }).error).toEqual({
			code: -32021,
			message: "missing required client capability",
			data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
		});
		const unknown = await taskMethod(s, "owner", msg("tasks/get", { taskId: "nope", ...declared }), extra).text();
		const foreign = await taskMethod(s, "ci", msg("tasks/get", { taskId: "mine", ...declared }), extra).text();
		expect(JSON.parse(unknown).error.code).toBe(-32602);
		expect(foreign).toBe(unknown);
		for (const m of ["tasks/cancel", "tasks/update"]) {
			expect(await taskMethod(s, "ci", msg(m, { taskId: "mine", ...declared }), extra).text()).toBe(unknown);
		}
		expect(s.view("owner", "mine")?.status).toBe("working");
		const ack = await taskMethod(s, "owner", msg("tasks/cancel", { taskId: "mine", ...declared }), extra).json();
		expect(ack).toEqual({ jsonrpc: "2.0", id: 5, result: extra });
	});
	test("detachable: aborts with its source until detached", () => {
		const src = new AbortController();
		const d = detachable(src.signal);
		d.detach();
		src.abort();
		expect(d.signal?.aborted).toBe(false);
		const src2 = new AbortController();
		const d2 = detachable(src2.signal);
		src2.abort();
		expect(d2.signal?.aborted).toBe(true);
	});
});
