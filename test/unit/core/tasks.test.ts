/**
 * The Tasks extension's parts (contract §17): the store, its wire spelling, the checks of a request,
 * and the answer port that turns a call into a task. Time is a manual clock: nothing here waits.
 */
import { describe, expect, test } from "bun:test";
import type { CallToAnswer } from "../../../src/core/answers.ts";
import { NO_SLOTS, TokenHoldings } from "../../../src/core/holdings.ts";
import { EraReplies } from "../../../src/core/methods.ts";
import { MODERN_STATUS } from "../../../src/core/modern.ts";
import { abort, runCall } from "../../../src/core/run.ts";
import { taskAnswer, taskMethod } from "../../../src/core/task-answer.ts";
import { declaresTasks, parseTaskParams } from "../../../src/core/task-parse.ts";
import { newTaskId, TASK_WINDOW_MS, taskWire } from "../../../src/core/task-wire.ts";
import { TaskStore } from "../../../src/core/tasks.ts";
import type { Connection, InFlightCall, ToolCallOutcome } from "../../../src/core/types.ts";
import { manualClock } from "../../helpers/clock.ts";

const declared = {
	_meta: { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } },
};

function store(limits = {}) {
	const clock = manualClock();
	const holdings = new TokenHoldings({ ...NO_SLOTS, tasks: null }, () => 2);
	const tasks = new TaskStore({ clock, limits, holdings });
	const cancelled: string[] = [];
	const make = (tokenName: string, id = newTaskId()) => {
		expect(tasks.create(id, { tokenName, cancel: r => cancelled.push(`${id}:${r}`) })).toBe(true);
		return id;
	};
	/** What `tasks/get` shows the token, or undefined for an id it cannot see. */
	const view = (tokenName: string, id: string) => {
		const t = tasks.get(tokenName, id);
		return t === undefined ? undefined : taskWire(t);
	};
	return { tasks, holdings, view, make, cancelled, advance: (ms: number) => clock.advance(ms) };
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
});

describe("TaskStore: ownership", () => {
	test("a task answers only to its token: another token's view and cancel are as for an unknown id, and change nothing", () => {
		const { tasks, view, make, cancelled } = store();
		const id = make("ci");
		expect(view("other", id)).toBeUndefined();
		expect(tasks.cancel("other", id)).toBe(false);
		expect(cancelled).toEqual([]);
		expect(view("ci", id)?.status).toBe("working");
		expect(view("ci", "no-such-id")).toBeUndefined();
	});
	test("revoking a token cancels its running tasks and forgets all of them; other tokens are untouched", () => {
		const { tasks, holdings, view, make, cancelled } = store();
		const a = make("ci");
		const b = make("ci");
		tasks.finish(b, done("ok"));
		const c = make("owner");
		expect(holdings.endToken("ci", "revoked")).toBe(2);
		expect(cancelled).toEqual([`${a}:revoked`]);
		expect(view("ci", a)).toBeUndefined();
		expect(view("ci", b)).toBeUndefined();
		expect(view("owner", c)?.status).toBe("working");
	});
});

describe("TaskStore: life of a task", () => {
	test("completed inlines the result; a later end (cancel, revoke) does not overwrite the first", () => {
		const { tasks, view, make, cancelled } = store();
		const id = make("owner");
		tasks.finish(id, done("hello"));
		expect(view("owner", id)).toMatchObject({ status: "completed", result: { content: [{ text: "hello" }] } });
		expect(tasks.cancel("owner", id)).toBe(true);
		expect(cancelled).toEqual([]);
		tasks.finish(id, { status: "cancelled" });
		expect(view("owner", id)?.status).toBe("completed");
	});
	test("cancel of a running task stops its work once and reports cancelled", () => {
		const { tasks, view, make, cancelled } = store();
		const id = make("owner");
		expect(tasks.cancel("owner", id)).toBe(true);
		expect(tasks.cancel("owner", id)).toBe(true);
		expect(cancelled).toEqual([`${id}:cancelled by tasks/cancel`]);
		expect(view("owner", id)).toMatchObject({ status: "cancelled" });
	});
	test("failed carries the JSON-RPC error and no result", () => {
		const { tasks, view, make } = store();
		const id = make("owner");
		tasks.finish(id, { status: "failed", error: { code: -32603, message: "internal error" } });
		const v = view("owner", id);
		expect(v).toMatchObject({ status: "failed", error: { code: -32603, message: "internal error" } });
		expect(v && "result" in v).toBe(false);
	});
	test("progress shows as statusMessage, cut to its tail; gone once the task ends", () => {
		const { tasks, view, make } = store();
		const id = make("owner");
		tasks.progress(id, `${"x".repeat(2000)}END`);
		const msg = String(view("owner", id)?.statusMessage);
		expect(msg.endsWith("END")).toBe(true);
		expect(msg.length).toBeLessThanOrEqual(501);
		tasks.finish(id, done("ok"));
		expect(view("owner", id)?.statusMessage).toBeUndefined();
	});
	test("wire fields: ISO timestamps, integer ttlMs and pollIntervalMs, no v1 names", () => {
		const { view, make } = store();
		const v = view("owner", make("owner")) ?? {};
		expect(new Date(String(v.createdAt)).toISOString()).toBe(String(v.createdAt));
		expect(Number.isInteger(v.ttlMs)).toBe(true);
		expect(Number.isInteger(v.pollIntervalMs)).toBe(true);
		expect("ttl" in v || "pollInterval" in v).toBe(false);
	});
});

describe("TaskStore: retention and bounds", () => {
	test("a finished task is dropped after its ttlMs; a running one is never dropped; a late result is kept keepAfterEndMs", () => {
		const { tasks, view, make, advance } = store({ ttlMs: 1000, keepAfterEndMs: 500 });
		const quick = make("owner");
		const slow = make("owner");
		tasks.finish(quick, done("a"));
		advance(1001);
		expect(view("owner", quick)).toBeUndefined();
		expect(view("owner", slow)?.status).toBe("working");
		advance(5000);
		tasks.finish(slow, done("b"));
		expect(view("owner", slow)?.ttlMs).toBe(6001 + 500);
		advance(499);
		expect(view("owner", slow)?.status).toBe("completed");
		advance(2);
		expect(view("owner", slow)).toBeUndefined();
	});
	test("count bound: the oldest finished task is evicted first, and says so as failed", () => {
		const { tasks, view, make } = store({ maxPerToken: 2 });
		const a = make("ci");
		const b = make("ci");
		tasks.finish(a, done("a"));
		tasks.finish(b, done("b"));
		const c = make("ci");
		expect(view("ci", a)).toMatchObject({ status: "failed", error: { code: -32603 } });
		expect(String(view("ci", a)?.statusMessage)).toContain("evicted");
		expect(view("ci", b)?.status).toBe("completed");
		expect(view("ci", c)?.status).toBe("working");
		// Another token's bound is its own.
		make("owner");
		make("owner");
		expect(view("ci", b)?.status).toBe("completed");
	});
	test("count bound with every task running: no new task (the call stays a plain call)", () => {
		const { tasks, make } = store({ maxPerToken: 2 });
		make("ci");
		make("ci");
		expect(tasks.create(newTaskId(), { tokenName: "ci", cancel: () => {} })).toBe(false);
	});
	test("byte bound: oldest results evicted until the token's kept bytes fit", () => {
		const { tasks, view, make } = store({ maxBytesPerToken: 3000 });
		const ids = [make("ci"), make("ci"), make("ci")];
		for (const id of ids) tasks.finish(id, done("y".repeat(1200)));
		expect(view("ci", ids[0] as string)?.status).toBe("failed");
		expect(view("ci", ids[1] as string)?.status).toBe("completed");
		expect(view("ci", ids[2] as string)?.status).toBe("completed");
	});
	test("tombstones are bounded too: at most maxPerToken of them", () => {
		const { tasks, view, make } = store({ maxPerToken: 2 });
		const all: string[] = [];
		for (let i = 0; i < 10; i++) {
			const id = make("ci");
			tasks.finish(id, done(String(i)));
			all.push(id);
		}
		expect(all.filter(id => view("ci", id) !== undefined).length).toBeLessThanOrEqual(4);
	});
	test("shutdown cancels every running task", () => {
		const { tasks, view, make, cancelled } = store();
		const ids = [make("a"), make("b")];
		tasks.cancelAll("stopped");
		expect(cancelled.length).toBe(2);
		expect([view("a", ids[0] as string)?.status, view("b", ids[1] as string)?.status]).toEqual([
			"cancelled",
			"cancelled",
		]);
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

describe("task-answer: a declaring call and its window", () => {
	const extra = { resultType: "complete" };
	const OUT = { content: [{ type: "text", text: "out" }], isError: false };

	/** A call the table registered, its outcome settled by hand, on a connection that counts its holds. */
	function running(tasks: TaskStore) {
		let settle: (o: ToolCallOutcome | null) => void = () => {};
		let fail: (e: Error) => void = () => {};
		const outcome = new Promise<ToolCallOutcome | null>((resolve, reject) => {
			settle = resolve;
			fail = reject;
		});
		const holds = { open: 0 };
		const conn: Connection = {
			holdOpen: () => {
				holds.open++;
				let once = true;
				return () => {
					if (once) holds.open--;
					once = false;
				};
			},
			closeSoon: () => {},
			cut: () => false,
			sent: () => null,
			queued: () => null,
		};
		const call: InFlightCall = {
			id: "c1",
			sid: null,
			tokenName: "owner",
			client: null,
			tool: "bash",
			startedAt: 0,
			controller: new AbortController(),
			cancelled: false,
		};
		const logs: string[] = [];
		const r: CallToAnswer = { id: 1, call, outcome, era: new EraReplies({}, extra), conn, log: l => logs.push(l) };
		return { r, call, holds, logs, settle, fail, tasks };
	}
	const setup = () => {
		const clock = manualClock();
		return { clock, ...running(new TaskStore({ clock })) };
	};
	/** Lets settled promises run their handlers (no timer, no waiting). */
	const flush = async () => {
		for (let i = 0; i < 10; i++) await Promise.resolve();
	};
	type Answer = { jsonrpc: string; id: number; result: Record<string, unknown> };
	const body = async (res: Promise<Response>) => (await res).json() as Promise<Answer>;

	test("a call that ends within the window gets its plain answer; no task, the window timer cancelled", async () => {
		const { clock, r, settle, tasks, holds } = setup();
		const res = taskAnswer(tasks, clock, "t1", 1000).answer(r);
		expect(holds.open).toBe(1);
		clock.advance(999);
		settle(OUT);
		expect(await body(Promise.resolve(res))).toEqual({ jsonrpc: "2.0", id: 1, result: { ...OUT, ...extra } });
		expect(tasks.get("owner", "t1")).toBeUndefined();
		expect(clock.pending()).toBe(0);
		expect(holds.open).toBe(0);
	});
	test("the window is timed on the server's clock: the handle comes at windowMs, not a tick before", async () => {
		const { clock, r, tasks, holds } = setup();
		let answered = false;
		const port = taskAnswer(tasks, clock, "t2", 60_000);
		let detachedAs: string | undefined;
		port.detached?.then(id => {
			detachedAs = id;
		});
		const res = Promise.resolve(port.answer(r)).finally(() => {
			answered = true;
		});
		clock.advance(59_999);
		await flush();
		expect(answered).toBe(false);
		expect(detachedAs).toBeUndefined();
		clock.advance(1);
		await flush();
		expect(answered).toBe(true);
		const got = await body(res);
		expect(got.result).toMatchObject({ resultType: "task", taskId: "t2", status: "working" });
		expect("task" in got.result || "result" in got.result).toBe(false);
		// The port hands the run its detach: the call goes on as the task without its request.
		expect(detachedAs).toBe("t2");
		// The handle is sent: the connection's idle timer is back on while the task runs on.
		expect(holds.open).toBe(0);
	});
	test("output before the task existed is its first statusMessage", async () => {
		const { clock, r, tasks } = setup();
		const port = taskAnswer(tasks, clock, "t3", 10);
		port.progress?.("step 1");
		port.progress?.("step 2");
		const res = Promise.resolve(port.answer(r));
		clock.advance(10);
		expect((await body(res)).result.statusMessage).toBe("step 2");
	});
	test("the bridge's own failure after the window ends the task failed with internal_error, logged", async () => {
		const { clock, r, tasks, fail, logs } = setup();
		const res = Promise.resolve(taskAnswer(tasks, clock, "t4", 5).answer(r));
		clock.advance(5);
		await res;
		fail(new Error("boom"));
		await flush();
		const t = tasks.get("owner", "t4");
		expect(t && taskWire(t)).toMatchObject({ status: "failed", error: { code: -32603, message: "internal error" } });
		expect(logs.join("\n")).toContain("internal error in task t4 ('bash'): Error: boom");
	});
	test("a tool error that ends after the window is completed with isError, not failed", async () => {
		const { clock, r, tasks, settle } = setup();
		const res = Promise.resolve(taskAnswer(tasks, clock, "t5", 5).answer(r));
		clock.advance(5);
		await res;
		settle({ content: [{ type: "text", text: "exit 3" }], isError: true });
		await flush();
		const t = tasks.get("owner", "t5");
		expect(t && taskWire(t)).toMatchObject({ status: "completed", result: { isError: true, ...extra } });
	});
	test("arguments the tool refused after the window: failed with invalid_params naming them", async () => {
		const { clock, r, tasks, settle } = setup();
		const res = Promise.resolve(taskAnswer(tasks, clock, "t6", 5).answer(r));
		clock.advance(5);
		await res;
		settle({ content: [], isError: true, invalidArgs: "invalid arguments for tool 'bash': x" });
		await flush();
		const t = tasks.get("owner", "t6");
		expect(t?.error).toEqual({ code: -32602, message: "invalid arguments for tool 'bash': x" });
	});
	test("a token with no room for another task gets the plain answer when the call ends", async () => {
		const clock = manualClock();
		const tasks = new TaskStore({ clock, limits: { maxPerToken: 0 } });
		const { r, settle, holds } = running(tasks);
		const port = taskAnswer(tasks, clock, "t7", 5);
		let detached = false;
		port.detached?.then(() => {
			detached = true;
		});
		const res = Promise.resolve(port.answer(r));
		clock.advance(5);
		await flush();
		expect(holds.open).toBe(1);
		settle(OUT);
		expect((await body(res)).result).toEqual({ ...OUT, ...extra });
		await flush();
		expect(detached).toBe(false);
	});
	test("tasks/cancel stops the task's call (its abort), once", async () => {
		const { clock, r, tasks, call } = setup();
		const res = Promise.resolve(taskAnswer(tasks, clock, "t8", 5).answer(r));
		clock.advance(5);
		await res;
		expect(tasks.cancel("owner", "t8")).toBe(true);
		expect(call.cancelled && call.controller.signal.aborted).toBe(true);
	});
	test("closing the request's stream cancels a call until it became a task, never after", async () => {
		const closing = async (task: string | undefined) => {
			const { call } = running(new TaskStore());
			const closed = new AbortController();
			let stop: () => void = () => {};
			const run = runCall(
				{
					version: "1",
					instructions: "",
					listTools: () => [],
					log: () => {},
					callTool: () => new Promise(r => (stop = () => r(OUT))),
				},
				{
					call,
					args: {},
					caller: { sid: null, tokenName: "owner", client: null },
					take: () => ({ ok: false, code: "all", why: "no registry in this test", held: 0 }),
					closed: closed.signal,
					detached: task === undefined ? undefined : Promise.resolve(task),
				},
			);
			await flush();
			closed.abort();
			stop();
			await run;
			return call.cancelled;
		};
		expect(await closing(undefined)).toBe(true);
		expect(await closing("t9")).toBe(false);
		const { call } = running(new TaskStore());
		abort(call);
		expect(call.cancelled).toBe(true);
	});
});

describe("task-answer: tasks/* methods", () => {
	const extra = { resultType: "complete" };
	const era = new EraReplies(MODERN_STATUS, extra);
	test("tasks/* without the declaration -> -32021 with requiredCapabilities; unknown id -> -32602; other token same", async () => {
		const s = new TaskStore();
		s.create("mine", { tokenName: "owner", cancel: () => {} });
		const msg = (method: string, params: Record<string, unknown>) => ({ id: 5, method, params });
		const undeclared = taskMethod(s, "owner", msg("tasks/get", { taskId: "mine" }), era);
		expect(undeclared.status).toBe(400);
		expect(((await undeclared.json()) as { error: unknown }).error).toEqual({
			code: -32021,
			message: "missing required client capability",
			data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
		});
		const unknown = await taskMethod(s, "owner", msg("tasks/get", { taskId: "nope", ...declared }), era).text();
		const foreign = await taskMethod(s, "ci", msg("tasks/get", { taskId: "mine", ...declared }), era).text();
		expect(JSON.parse(unknown).error.code).toBe(-32602);
		expect(foreign).toBe(unknown);
		for (const m of ["tasks/cancel", "tasks/update"]) {
			expect(await taskMethod(s, "ci", msg(m, { taskId: "mine", ...declared }), era).text()).toBe(unknown);
		}
		expect(s.get("owner", "mine")?.status).toBe("working");
		const ack = await taskMethod(s, "owner", msg("tasks/cancel", { taskId: "mine", ...declared }), era).json();
		expect(ack).toEqual({ jsonrpc: "2.0", id: 5, result: extra });
	});
});
