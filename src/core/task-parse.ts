/**
 * Pure checks of the Tasks extension's requests (contract §17): whether a 2026-07-28 request
 * declares the extension in its own `_meta` (per request, never remembered), and the params of
 * `tasks/get`, `tasks/update` and `tasks/cancel`. Each returns a value; the caller picks the error row.
 */
import { isRecord } from "./jsonrpc.ts";
import { TASKS_EXTENSION } from "./task-wire.ts";
import type { Refused } from "./types.ts";

const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

/** The extension's methods; `tasks/result` and `tasks/list` are gone from it (method not found). */
export const TASK_METHODS: readonly string[] = ["tasks/get", "tasks/update", "tasks/cancel"];

/** Longest task id looked up: ours are 24 characters; anything much longer cannot be one. */
const MAX_TASK_ID_CHARS = 256;

/** True when this request's `_meta` client capabilities list the extension with an object (`{}`). */
export function declaresTasks(params: Record<string, unknown> | undefined): boolean {
	const meta = params?._meta;
	const caps = isRecord(meta) ? meta[META_CAPABILITIES] : undefined;
	const ext = isRecord(caps) ? caps.extensions : undefined;
	return isRecord(ext) && isRecord(ext[TASKS_EXTENSION]);
}

/** The task id, or why not: the sentence is the -32602 answer's message. */
export type TaskParams = { ok: true; taskId: string } | Refused;

/** `params.taskId` (a non-empty string); `tasks/update` also needs `inputResponses` to be an object when sent. */
export function parseTaskParams(method: string, params: Record<string, unknown> | undefined): TaskParams {
	const taskId = params?.taskId;
	if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > MAX_TASK_ID_CHARS) {
		return { ok: false, why: "invalid params: taskId must be a task id string" };
	}
	if (method === "tasks/update" && params && "inputResponses" in params && !isRecord(params.inputResponses)) {
		return { ok: false, why: "invalid params: inputResponses must be an object" };
	}
	return { ok: true, taskId };
}

/** `data` of the -32021 answer: what the client must declare. */
export const REQUIRED_TASKS_DATA = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as const;
