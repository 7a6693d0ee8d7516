/**
 * The Tasks extension's facts on the wire (`io.modelcontextprotocol/tasks`, contract §17): its name,
 * the window before a declaring call is answered with a task, task ids, and a task as `tasks/get`
 * shows it. The store (tasks.ts) keeps records; this module alone decides how they are spelled.
 */
import { randomBytes } from "node:crypto";
import type { TaskRecord } from "./tasks.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How long a declaring call may run before it is answered with a task handle (at most 2 s, §17). */
export const TASK_WINDOW_MS = 1000;

/** What a task tells its poller to wait between `tasks/get` requests. */
const TASK_POLL_INTERVAL_MS = 1000;

/** 18 random bytes as base64url: 144 bits, header-safe (`Mcp-Name` carries it). */
export const newTaskId = (): string => randomBytes(18).toString("base64url");

const iso = (ms: number): string => new Date(ms).toISOString();

/** A task as the wire shows it: ISO timestamps, integer `ttlMs` and `pollIntervalMs`, the result or error once ended. */
export function taskWire(t: Readonly<TaskRecord>): Record<string, unknown> {
	return {
		taskId: t.taskId,
		status: t.status,
		...(t.statusMessage !== undefined ? { statusMessage: t.statusMessage } : {}),
		createdAt: iso(t.createdAt),
		lastUpdatedAt: iso(t.lastUpdatedAt),
		ttlMs: t.ttlMs,
		pollIntervalMs: TASK_POLL_INTERVAL_MS,
		...(t.result !== undefined ? { result: t.result } : {}),
		...(t.error !== undefined ? { error: t.error } : {}),
	};
}
