/**
 * The task store of the Tasks extension (`io.modelcontextprotocol/tasks`, contract §17): a call
 * that outlives its window becomes a task its token can poll. Invariants: ids carry 144 random bits;
 * a task answers only to the token that made it; per token at most `maxPerToken` tasks and
 * `maxBytesPerToken` bytes of kept results, the oldest finished one evicted first (it stays readable
 * as `failed`, saying so); a finished task is dropped `ttlMs` after its creation, a running one never.
 */
import { randomBytes } from "node:crypto";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/**
 * How long a declaring call may run before it is answered with a task handle (at most 2 s, §17).
 * @internal
 */
export const TASK_WINDOW_MS = 1000;

/** The testing knob's window: it can shorten TASK_WINDOW_MS (down to 0), never lift it; junk means the default. */
export function taskWindowMs(asked: number | undefined): number {
	return asked !== undefined && Number.isFinite(asked) ? Math.min(TASK_WINDOW_MS, Math.max(0, asked)) : TASK_WINDOW_MS;
}
const TASK_TTL_MS = 60 * 60 * 1000;
/** A result that arrives late is still kept this long after it ends (`ttlMs` grows to cover it). */
const TASK_KEEP_AFTER_END_MS = 10 * 60 * 1000;
const TASK_POLL_INTERVAL_MS = 1000;
const MAX_TASKS_PER_TOKEN = 32;
const MAX_TASK_BYTES_PER_TOKEN = 8 * 1024 * 1024;
/** The last progress text shown as `statusMessage` is cut to this many characters (its tail). */
const STATUS_MESSAGE_MAX_CHARS = 500;
/** Code of the `error` an evicted task reports (internal error: the server dropped the result). */
const EVICTED_CODE = -32603;

type TaskStatus = "working" | "completed" | "failed" | "cancelled";

export type TaskEnd =
	| { status: "completed"; result: Record<string, unknown> }
	| { status: "failed"; error: { code: number; message: string } }
	| { status: "cancelled"; message?: string };

export interface TaskInfo {
	owner: string;
	client: string | null;
	tool: string;
	/** Stops the work (the call's own cancel); called at most once, only while the task runs. */
	cancel(reason: string): void;
}

interface TaskRecord extends TaskInfo {
	taskId: string;
	status: TaskStatus;
	statusMessage?: string;
	createdAt: number;
	lastUpdatedAt: number;
	ttlMs: number;
	result?: Record<string, unknown>;
	error?: { code: number; message: string };
	/** Bytes of the kept result (0 while running, for a tombstone, or without a result). */
	bytes: number;
	evicted: boolean;
}

export interface TaskLimits {
	maxPerToken: number;
	maxBytesPerToken: number;
	ttlMs: number;
	keepAfterEndMs: number;
}

const DEFAULT_LIMITS: TaskLimits = {
	maxPerToken: MAX_TASKS_PER_TOKEN,
	maxBytesPerToken: MAX_TASK_BYTES_PER_TOKEN,
	ttlMs: TASK_TTL_MS,
	keepAfterEndMs: TASK_KEEP_AFTER_END_MS,
};

/** A running task as `/a2a` lists it. */
export interface RunningTask {
	taskId: string;
	owner: string;
	client: string | null;
	tool: string;
	createdAt: number;
}

/** 18 random bytes as base64url: 144 bits, header-safe (`Mcp-Name` carries it). */
export const newTaskId = (): string => randomBytes(18).toString("base64url");

const iso = (ms: number): string => new Date(ms).toISOString();

export class TaskStore {
	readonly #byId = new Map<string, TaskRecord>();
	readonly #now: () => number;
	readonly #limits: TaskLimits;

	constructor(opts: { now?: () => number; limits?: Partial<TaskLimits> } = {}) {
		this.#now = opts.now ?? Date.now;
		this.#limits = { ...DEFAULT_LIMITS, ...opts.limits };
	}

	/**
	 * A new running task under `taskId`, or null when its token already has `maxPerToken` tasks
	 * running (nothing finished to evict): the call then stays a plain call.
	 */
	create(taskId: string, info: TaskInfo): { taskId: string } | null {
		this.#sweep();
		const own = this.#owned(info.owner).filter(t => !t.evicted);
		if (own.length >= this.#limits.maxPerToken) {
			const oldestDone = own.find(t => t.status !== "working");
			if (oldestDone === undefined) return null;
			this.#evict(oldestDone, `more than ${this.#limits.maxPerToken} tasks kept for this token`);
		}
		const now = this.#now();
		const rec: TaskRecord = {
			...info,
			taskId,
			status: "working",
			createdAt: now,
			lastUpdatedAt: now,
			ttlMs: this.#limits.ttlMs,
			bytes: 0,
			evicted: false,
		};
		this.#byId.set(taskId, rec);
		this.#trimTombstones(info.owner);
		return { taskId };
	}

	/** The wire view of a task for its owner; undefined for an unknown id, another token's, or an expired one. */
	view(owner: string, taskId: string): Record<string, unknown> | undefined {
		this.#sweep();
		const t = this.#byId.get(taskId);
		if (t === undefined || t.owner !== owner) return undefined;
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

	/** The latest progress text of a running task, shown as its `statusMessage` (tail kept). */
	progress(taskId: string, text: string): void {
		const t = this.#byId.get(taskId);
		if (t?.status !== "working" || text.length === 0) return;
		t.statusMessage = text.length > STATUS_MESSAGE_MAX_CHARS ? `…${text.slice(-STATUS_MESSAGE_MAX_CHARS)}` : text;
		t.lastUpdatedAt = this.#now();
	}

	/** The call behind a task ended; a task already ended (cancelled, revoked) keeps its first end. */
	finish(taskId: string, end: TaskEnd): void {
		const t = this.#byId.get(taskId);
		if (t?.status !== "working") return;
		const now = this.#now();
		t.status = end.status;
		t.lastUpdatedAt = now;
		t.ttlMs = Math.max(t.ttlMs, now - t.createdAt + this.#limits.keepAfterEndMs);
		delete t.statusMessage;
		if (end.status === "completed") {
			t.result = end.result;
			t.bytes = Buffer.byteLength(JSON.stringify(end.result));
		} else if (end.status === "failed") {
			t.error = end.error;
			t.statusMessage = end.error.message;
		} else if (end.message !== undefined) {
			t.statusMessage = end.message;
		}
		this.#fitBytes(t.owner);
	}

	/** `tasks/cancel`: false for an unknown id or another token's (nothing changes); a finished task is left as it is. */
	cancel(owner: string, taskId: string): boolean {
		this.#sweep();
		const t = this.#byId.get(taskId);
		if (t === undefined || t.owner !== owner) return false;
		if (t.status === "working") this.#stop(t, "cancelled by tasks/cancel");
		return true;
	}

	/** The token was revoked or rotated: its running tasks are cancelled and every one of its tasks is forgotten. */
	endOwner(owner: string, reason: string): number {
		const own = this.#owned(owner);
		for (const t of own) {
			if (t.status === "working") this.#stop(t, reason);
			this.#byId.delete(t.taskId);
		}
		return own.length;
	}

	/** Shutdown: every running task is cancelled like a call. */
	cancelAll(reason: string): void {
		for (const t of this.#byId.values()) if (t.status === "working") this.#stop(t, reason);
	}

	running(): RunningTask[] {
		return [...this.#byId.values()]
			.filter(t => t.status === "working")
			.map(({ taskId, owner, client, tool, createdAt }) => ({ taskId, owner, client, tool, createdAt }));
	}

	get size(): number {
		this.#sweep();
		return this.#byId.size;
	}

	#stop(t: TaskRecord, reason: string): void {
		this.finish(t.taskId, { status: "cancelled", message: reason });
		t.cancel(reason);
	}

	#owned(owner: string): TaskRecord[] {
		return [...this.#byId.values()].filter(t => t.owner === owner);
	}

	/** Oldest finished results go first until the token's kept bytes fit again. */
	#fitBytes(owner: string): void {
		const own = this.#owned(owner);
		let total = own.reduce((n, t) => n + t.bytes, 0);
		for (const t of own) {
			if (total <= this.#limits.maxBytesPerToken) break;
			if (t.bytes === 0) continue;
			total -= t.bytes;
			this.#evict(t, `kept results of this token over ${this.#limits.maxBytesPerToken} bytes`);
		}
	}

	/** The result is dropped; the task stays readable as `failed`, saying why, until it expires. */
	#evict(t: TaskRecord, why: string): void {
		const message = `task result evicted: ${why}; oldest first`;
		t.evicted = true;
		t.status = "failed";
		t.error = { code: EVICTED_CODE, message };
		t.statusMessage = message;
		t.lastUpdatedAt = this.#now();
		delete t.result;
		t.bytes = 0;
	}

	/** Evicted tasks are kept as small tombstones, at most `maxPerToken` of them per token. */
	#trimTombstones(owner: string): void {
		const tombs = this.#owned(owner).filter(t => t.evicted);
		for (const t of tombs.slice(0, Math.max(0, tombs.length - this.#limits.maxPerToken))) this.#byId.delete(t.taskId);
	}

	#sweep(): void {
		const now = this.#now();
		for (const [id, t] of this.#byId) {
			if (t.status !== "working" && now - t.createdAt > t.ttlMs) this.#byId.delete(id);
		}
	}
}
