/**
 * The task store of the Tasks extension (contract §17): a call that outlives its window becomes a
 * task its token can poll. Invariants: a task answers only to the token that made it; per token at
 * most `maxPerToken` tasks and `maxBytesPerToken` bytes of kept results, the oldest finished one
 * evicted first (it stays readable as `failed`, saying so); a finished task is dropped `ttlMs` after
 * its creation, a running one never. Time comes from the injected clock. How a task is spelled on
 * the wire is task-wire.ts; how a call becomes one, and the `tasks/*` methods, task-answer.ts.
 */
import { SYSTEM_CLOCK } from "./clock.ts";
import { errorObject, type RpcErrorObject } from "./errors.ts";
import { NO_SLOTS, type SlotBounds, TokenHoldings } from "./holdings.ts";
import type { Clock, Slot } from "./types.ts";

const TASK_TTL_MS = 60 * 60 * 1000;
/** A result that arrives late is still kept this long after it ends (`ttlMs` grows to cover it). */
const TASK_KEEP_AFTER_END_MS = 10 * 60 * 1000;
const MAX_TASKS_PER_TOKEN = 32;
const MAX_TASK_BYTES_PER_TOKEN = 8 * 1024 * 1024;
/** The last progress text shown as `statusMessage` is cut to this many characters (its tail). */
const STATUS_MESSAGE_MAX_CHARS = 500;

type TaskStatus = "working" | "completed" | "failed" | "cancelled";

/** How the call behind a task came out. */
export type TaskOutcome =
	| { status: "completed"; result: Record<string, unknown> }
	| { status: "failed"; error: RpcErrorObject }
	| { status: "cancelled"; message?: string };

export interface TaskInfo {
	/** The token that made the task: the only one it answers to. */
	tokenName: string;
	/** Stops the work (the call's own cancel); called at most once, only while the task runs. */
	cancel(reason: string): void;
}

export interface TaskRecord extends TaskInfo {
	taskId: string;
	status: TaskStatus;
	statusMessage?: string;
	createdAt: number;
	lastUpdatedAt: number;
	ttlMs: number;
	result?: Record<string, unknown>;
	error?: RpcErrorObject;
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

/** A registry of its own for a store made without the server's (unit tests): tasks only, bounded here. */
const TASKS_ONLY: SlotBounds = { ...NO_SLOTS, tasks: null };

export class TaskStore {
	readonly #byId = new Map<string, TaskRecord>();
	/** Each kept task's slot in the registry of what tokens hold (core/holdings.ts): revocation ends it there. */
	readonly #slots = new Map<string, Slot>();
	readonly #clock: Pick<Clock, "now">;
	readonly #limits: TaskLimits;
	readonly #holdings: TokenHoldings;

	constructor(opts: { clock?: Pick<Clock, "now">; limits?: Partial<TaskLimits>; holdings?: TokenHoldings } = {}) {
		this.#clock = opts.clock ?? SYSTEM_CLOCK;
		this.#limits = { ...DEFAULT_LIMITS, ...opts.limits };
		this.#holdings = opts.holdings ?? new TokenHoldings(TASKS_ONLY, () => 1);
	}

	/**
	 * A new running task under `taskId`; false when its token already has `maxPerToken` tasks
	 * running (nothing finished to evict): the call then stays a plain call.
	 */
	create(taskId: string, info: TaskInfo): boolean {
		this.#sweep();
		const own = this.#tokens(info.tokenName).filter(t => !t.evicted);
		if (own.length >= this.#limits.maxPerToken) {
			const oldestDone = own.find(t => t.status !== "working");
			if (oldestDone === undefined) return false;
			this.#evict(oldestDone, `more than ${this.#limits.maxPerToken} tasks kept for this token`);
		}
		// Revoking or rotating the token stops the task and forgets it (contract §17).
		const taken = this.#holdings.take("tasks", info, reason => this.#forget(taskId, reason));
		if (!taken.ok) return false;
		this.#slots.set(taskId, taken.slot);
		const now = this.#clock.now();
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
		this.#trimTombstones(info.tokenName);
		return true;
	}

	/** The task for the token that made it; undefined for an unknown id, another token's, or an expired one. */
	get(tokenName: string, taskId: string): Readonly<TaskRecord> | undefined {
		this.#sweep();
		const t = this.#byId.get(taskId);
		return t?.tokenName === tokenName ? t : undefined;
	}

	/** The latest progress text of a running task, shown as its `statusMessage` (tail kept). */
	progress(taskId: string, text: string): void {
		const t = this.#byId.get(taskId);
		if (t?.status !== "working" || text.length === 0) return;
		t.statusMessage = text.length > STATUS_MESSAGE_MAX_CHARS ? `…${text.slice(-STATUS_MESSAGE_MAX_CHARS)}` : text;
		t.lastUpdatedAt = this.#clock.now();
	}

	/** The call behind a task came out; a task already finished (cancelled, revoked) keeps its first outcome. */
	finish(taskId: string, outcome: TaskOutcome): void {
		const t = this.#byId.get(taskId);
		if (t?.status !== "working") return;
		const now = this.#clock.now();
		t.status = outcome.status;
		t.lastUpdatedAt = now;
		t.ttlMs = Math.max(t.ttlMs, now - t.createdAt + this.#limits.keepAfterEndMs);
		delete t.statusMessage;
		if (outcome.status === "completed") {
			t.result = outcome.result;
			t.bytes = Buffer.byteLength(JSON.stringify(outcome.result));
		} else if (outcome.status === "failed") {
			t.error = outcome.error;
			t.statusMessage = outcome.error.message;
		} else if (outcome.message !== undefined) {
			t.statusMessage = outcome.message;
		}
		this.#fitBytes(t.tokenName);
	}

	/** `tasks/cancel`: false for an unknown id or another token's (nothing changes); a finished task is left as it is. */
	cancel(tokenName: string, taskId: string): boolean {
		const t = this.get(tokenName, taskId);
		if (t === undefined) return false;
		if (t.status === "working") this.#stop(t, "cancelled by tasks/cancel");
		return true;
	}

	/** A task whose token was revoked or rotated: stopped if it runs, and forgotten. */
	#forget(taskId: string, reason: string): void {
		const t = this.#byId.get(taskId);
		if (t?.status === "working") this.#stop(t, reason);
		this.#drop(taskId);
	}

	#drop(taskId: string): void {
		this.#byId.delete(taskId);
		this.#slots.get(taskId)?.release();
		this.#slots.delete(taskId);
	}

	/** Shutdown: every running task is cancelled like a call. */
	cancelAll(reason: string): void {
		for (const t of this.#byId.values()) if (t.status === "working") this.#stop(t, reason);
	}

	#stop(t: Readonly<TaskRecord>, reason: string): void {
		this.finish(t.taskId, { status: "cancelled", message: reason });
		t.cancel(reason);
	}

	#tokens(tokenName: string): TaskRecord[] {
		return [...this.#byId.values()].filter(t => t.tokenName === tokenName);
	}

	/** Oldest finished results go first until the token's kept bytes fit again. */
	#fitBytes(tokenName: string): void {
		const own = this.#tokens(tokenName);
		let total = own.reduce((n, t) => n + t.bytes, 0);
		for (const t of own) {
			if (total <= this.#limits.maxBytesPerToken) break;
			if (t.bytes === 0) continue;
			total -= t.bytes;
			this.#evict(t, `kept results of this token over ${this.#limits.maxBytesPerToken} bytes`);
		}
	}

	/** The result is dropped; the task stays readable as `failed` (internal error: the server dropped it) until it expires. */
	#evict(t: TaskRecord, why: string): void {
		const message = `task result evicted: ${why}; oldest first`;
		t.evicted = true;
		t.status = "failed";
		t.error = errorObject("internal_error", message);
		t.statusMessage = message;
		t.lastUpdatedAt = this.#clock.now();
		delete t.result;
		t.bytes = 0;
	}

	/** Evicted tasks are kept as small tombstones, at most `maxPerToken` of them per token. */
	#trimTombstones(tokenName: string): void {
		const tombs = this.#tokens(tokenName).filter(t => t.evicted);
		for (const t of tombs.slice(0, Math.max(0, tombs.length - this.#limits.maxPerToken))) this.#drop(t.taskId);
	}

	#sweep(): void {
		const now = this.#clock.now();
		for (const [id, t] of this.#byId) {
			if (t.status !== "working" && now - t.createdAt > t.ttlMs) this.#drop(id);
		}
	}
}
