/**
 * The Tasks extension's answers (contract §17): a declaring `tools/call` still running after its
 * window is answered with a task handle and runs on as the task; `tasks/get`, `tasks/update` and
 * `tasks/cancel` reach only the caller token's own tasks, another token's id answered exactly as an
 * unknown one. The window is timed on the server's clock.
 */
import { errorDetail } from "../text/error-text.ts";
import { type AnswerPort, type CallToAnswer, callResult, plainAnswer } from "./answers.ts";
import { errorObject, rpcResult } from "./errors.ts";
import type { EraReplies, RpcRequest } from "./methods.ts";
import { abort } from "./run.ts";
import { declaresTasks, parseTaskParams, REQUIRED_TASKS_DATA } from "./task-parse.ts";
import { taskWire } from "./task-wire.ts";
import type { TaskOutcome, TaskStore } from "./tasks.ts";
import type { Clock, ToolCallOutcome } from "./types.ts";

/**
 * The answer of a declaring call: its own if it ends within `windowMs`; else the task handle under
 * `taskId`, the call going on as that task. A token with no room for another task gets the plain
 * answer when the call ends.
 */
export function taskAnswer(store: TaskStore, clock: Clock, taskId: string, windowMs: number): AnswerPort {
	// Output before the task exists is kept, so the task starts with it.
	let latest = "";
	let detach: (taskId: string) => void = () => {};
	const detached = new Promise<string>(resolve => {
		detach = resolve;
	});
	return {
		detached,
		progress: text => {
			latest = text;
			store.progress(taskId, text);
		},
		async answer(r) {
			const release = r.conn.holdOpen();
			try {
				const first = await withinWindow(clock, windowMs, r.outcome);
				if (first !== null) return plainAnswer(r.id, first.outcome, r.era);
				if (!becomeTask(store, taskId, r)) return plainAnswer(r.id, await r.outcome, r.era);
				// From here on the call's records name the task, and closing the request's stream no longer cancels it.
				detach(taskId);
				store.progress(taskId, latest);
				const task = store.get(r.call.tokenName, taskId);
				return rpcResult(r.id, { ...r.era.body(task && taskWire(task)), resultType: "task" });
			} finally {
				release();
			}
		},
	};
}

/** The outcome if it comes within `ms` on the server's clock; null once the window closed first. */
function withinWindow<T>(clock: Clock, ms: number, outcome: Promise<T>): Promise<{ outcome: T } | null> {
	return new Promise((resolve, reject) => {
		const cancel = clock.after(ms, () => resolve(null));
		outcome.then(
			o => {
				cancel();
				resolve({ outcome: o });
			},
			err => {
				cancel();
				reject(err);
			},
		);
	});
}

/** Makes the call the task `taskId`, finished by the call's outcome; false when its token has no room. */
function becomeTask(store: TaskStore, taskId: string, r: CallToAnswer): boolean {
	const { call } = r;
	const info = { tokenName: call.tokenName, cancel: () => abort(call) };
	if (!store.create(taskId, info)) return false;
	r.outcome.then(
		outcome => store.finish(taskId, taskOutcome(outcome, r.era)),
		err => {
			r.log(`a2a-bridge: internal error in task ${taskId} ('${call.tool}'): ${errorDetail(err)}`);
			store.finish(taskId, { status: "failed", error: errorObject("internal_error") });
		},
	);
	return true;
}

function taskOutcome(outcome: ToolCallOutcome | null, era: EraReplies): TaskOutcome {
	if (outcome === null) return { status: "cancelled", message: "cancelled" };
	if (outcome.invalidArgs !== undefined) {
		return { status: "failed", error: errorObject("invalid_params", outcome.invalidArgs) };
	}
	return { status: "completed", result: callResult(outcome, era) };
}

/** `tasks/get`, `tasks/update`, `tasks/cancel` for the token `tokenName`; the checks run in the order of docs/protocol.md. */
export function taskMethod(
	store: TaskStore,
	tokenName: string,
	msg: Pick<RpcRequest, "id" | "method" | "params">,
	era: EraReplies,
): Response {
	if (!declaresTasks(msg.params)) return era.error("missing_client_capability", msg.id, undefined, REQUIRED_TASKS_DATA);
	const p = parseTaskParams(msg.method, msg.params);
	if (!p.ok) return era.error("invalid_params", msg.id, p.why);
	if (msg.method === "tasks/get") {
		const task = store.get(tokenName, p.taskId);
		return task === undefined ? era.error("task_not_found", msg.id) : era.result(msg.id, taskWire(task));
	}
	const known =
		msg.method === "tasks/cancel" ? store.cancel(tokenName, p.taskId) : store.get(tokenName, p.taskId) !== undefined;
	// No task of this bridge ever asks for input, so a `tasks/update` has nothing to deliver: acknowledged.
	return known ? era.result(msg.id, {}) : era.error("task_not_found", msg.id);
}
