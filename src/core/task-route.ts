/**
 * The Tasks extension on the wire (contract §17): a declaring `tools/call` still running after its
 * window is answered with a task handle and runs on; `tasks/get`, `tasks/update` and `tasks/cancel`
 * reach only the caller token's own tasks. Another token's id is answered exactly as an unknown one.
 */
import { type RpcId, rpcError, rpcErrorData, rpcErrorMessage, rpcResult } from "./errors.ts";
import { declaresTasks, parseTaskParams, REQUIRED_TASKS_DATA } from "./task-parse.ts";
import type { TaskEnd, TaskStore } from "./tasks.ts";
import type { ToolCallOutcome } from "./types.ts";

/** What a declaring `tools/call` brings to the call table. */
export interface TaskMode {
	taskId: string;
	windowMs: number;
	store: TaskStore;
	/** From now on closing the request's stream no longer cancels the call. */
	detach(): void;
}

export interface TaskCall {
	id: RpcId;
	owner: string;
	client: string | null;
	tool: string;
	run: Promise<ToolCallOutcome | null>;
	/** The plain answer for an outcome (as a call that is no task gets it). */
	answer(outcome: ToolCallOutcome | null): Response;
	/** The wire result of a finished call (what `tasks/get` inlines). */
	result(outcome: ToolCallOutcome): Record<string, unknown>;
	cancel(reason: string): void;
	/** The call's output so far (its progress before the task existed). */
	output(): string;
	/** Called once the handle is sent: the connection's idle timer is back on. */
	answered(): void;
	log(line: string): void;
	extra: Record<string, unknown>;
}

/**
 * The call's own answer if it ends within the window; else the task handle, with the call going on
 * under the task. A token with no room for another task gets the plain answer when the call ends.
 */
export async function answerOrTask(mode: TaskMode, c: TaskCall): Promise<Response> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const window = new Promise<"window">(resolve => {
		timer = setTimeout(() => resolve("window"), mode.windowMs);
	});
	const first = await Promise.race([c.run.then(outcome => ({ outcome })), window]).finally(() => clearTimeout(timer));
	if (first !== "window") return c.answer(first.outcome);
	const made = mode.store.create(mode.taskId, { owner: c.owner, client: c.client, tool: c.tool, cancel: c.cancel });
	if (made === null) return c.answer(await c.run);
	mode.detach();
	mode.store.progress(mode.taskId, c.output());
	c.run.then(
		outcome => mode.store.finish(mode.taskId, endOf(outcome, c.result)),
		err => {
			c.log(`a2a-bridge: internal error in task ${mode.taskId} ('${c.tool}'): ${String(err)}`);
			mode.store.finish(mode.taskId, { status: "failed", error: { code: -32603, message: "internal error" } });
		},
	);
	c.answered();
	return rpcResult(c.id, { ...mode.store.view(c.owner, mode.taskId), ...c.extra, resultType: "task" });
}

function endOf(outcome: ToolCallOutcome | null, result: (o: ToolCallOutcome) => Record<string, unknown>): TaskEnd {
	if (outcome === null) return { status: "cancelled", message: "cancelled" };
	if (outcome.invalidArgs !== undefined)
		return { status: "failed", error: { code: -32602, message: outcome.invalidArgs } };
	return { status: "completed", result: result(outcome) };
}

/** `tasks/get`, `tasks/update`, `tasks/cancel` for the token `owner`; the checks run in the order of docs/protocol.md. */
export function taskMethod(
	store: TaskStore,
	owner: string,
	msg: { id: RpcId; method: string; params: Record<string, unknown> | undefined },
	extra: Record<string, unknown>,
): Response {
	if (!declaresTasks(msg.params)) return rpcErrorData("missing_client_capability", msg.id, REQUIRED_TASKS_DATA);
	const p = parseTaskParams(msg.method, msg.params);
	if (!p.ok) return rpcErrorMessage("modern_invalid_params", msg.id, p.message);
	if (msg.method === "tasks/get") {
		const view = store.view(owner, p.taskId);
		return view === undefined ? rpcError("task_not_found", msg.id) : rpcResult(msg.id, { ...view, ...extra });
	}
	const known =
		msg.method === "tasks/cancel" ? store.cancel(owner, p.taskId) : store.view(owner, p.taskId) !== undefined;
	// No task of this bridge ever asks for input, so a `tasks/update` has nothing to deliver: acknowledged.
	return known ? rpcResult(msg.id, extra) : rpcError("task_not_found", msg.id);
}

/** A copy of `signal` that can be cut loose: after `detach()` its source aborting changes nothing. */
export function detachable(signal: AbortSignal | undefined): { signal: AbortSignal | undefined; detach(): void } {
	if (signal === undefined) return { signal, detach: () => {} };
	const copy = new AbortController();
	const onAbort = () => copy.abort(signal.reason);
	if (signal.aborted) onAbort();
	else signal.addEventListener("abort", onAbort, { once: true });
	return { signal: copy.signal, detach: () => signal.removeEventListener("abort", onAbort) };
}
