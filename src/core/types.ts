/**
 * The types the request pipeline shares with the host adapter and the feature routes. Types only:
 * any module may import them without pulling in the server.
 */

/** Every kind of slot a token can hold (core/holdings.ts: the one registry that hands them out and ends them). */
export type SlotKind = "sessions" | "calls" | "tasks" | "uploads" | "downloads" | "digests" | "prompts";

/** One slot held: `ended` aborts when its token is revoked or rotated; `release` (idempotent) frees it. */
export interface Slot {
	readonly kind: SlotKind;
	readonly tokenName: string;
	readonly ended: AbortSignal;
	release(): void;
}

/**
 * A kind's bound for the one share rule (`shareRule`, core/holdings.ts): a total divided among the live tokens;
 * `each` per token (set by the kind's owner, not divided) with `total` over all (approval prompts); or null when
 * the kind's owner bounds it (tasks: per token, by count and bytes, core/tasks.ts).
 */
export type SlotBound = number | { each: number; total: number } | null;

/**
 * Every refusal's and failure's one shape: the sentence saying why (for the caller or the log), and a code
 * (`C`) where the caller must tell them apart.
 */
export type Refused<C extends string = never> = [C] extends [never]
	? { ok: false; why: string }
	: { ok: false; code: C; why: string };

/** What a piece of work gave, or what it threw, kept to be rethrown or told apart: a caught throw, not a refusal. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * A slot, or why there is none: `revoked` (the caller's own secret ended, answered like any ended secret),
 * `all` (the kind's bound is full) or `share` (this token's share is); `held` is the count the refusal names.
 */
export type Taken = { ok: true; slot: Slot } | (Refused<"revoked" | "all" | "share"> & { held: number });

/** Who takes a slot: the token's name and, from the request's identity, the signal of its secret ending. */
export interface Holder {
	tokenName: string;
	ended?: AbortSignal;
}

/** SSE pacing (contract §6.4); overridable in tests. */
export interface SseTimings {
	minIntervalMs?: number;
	keepaliveMs?: number;
	heartbeatMs?: number;
}

/**
 * Time as every part sees it (sessions, calls, the task window, SSE pacing, the audit), injected once so
 * tests move it by hand instead of waiting; core/clock.ts has the process's own.
 */
export interface Clock {
	now(): number;
	/** Runs `fn` once, `ms` from now; the returned function cancels it. */
	after(ms: number, fn: () => void): () => void;
}

export type ContentBlock =
	| { type: "text"; text: string }
	| { type: "image"; data: string; mimeType: string }
	| Record<string, unknown>;

export interface McpTool {
	name: string;
	description: string;
	inputSchema: Record<string, unknown>;
	annotations?: Record<string, boolean>;
}

export interface ToolCallOutcome {
	content: ContentBlock[];
	isError: boolean;
	/** Set when the arguments failed the tool's schema: the call is answered `-32602` with this text. */
	invalidArgs?: string;
	/** Refused before anything ran (unknown tool, bad arguments, no Main): audited as a coalesced refusal. */
	refused?: true;
}

/** Who made a call: the session (null in the 2026-07-28 era), the token's name and the client's name. */
export interface CallerInfo {
	sid: string | null;
	tokenName: string;
	client: string | null;
}

export interface ToolCallRequest {
	callId: string;
	name: string;
	args: Record<string, unknown>;
	signal: AbortSignal;
	caller: CallerInfo;
	/** Present when the answer port shows progress (SSE, or a task's status): the call's cumulative output so far. */
	onProgress?: (text: string) => void;
	/** Present in SSE mode: the host backgrounded the call and stopped forwarding output. */
	onBackgrounded?: () => void;
	/**
	 * A slot of `kind` for this call's token from the one registry (core/holdings.ts), ended by `onEnd` if the
	 * token is revoked or rotated: the host's approval prompt queue takes each waiting prompt here.
	 */
	take(kind: SlotKind, onEnd?: (reason: string) => void): Taken;
	/**
	 * Writes the call's `start` record; the adapter awaits it just before the tool runs. A call the
	 * adapter refuses first never begins: it gets one coalesced `refused` record instead of start/done.
	 */
	begin?: () => Promise<void>;
}

/** What every audit record of a call names. */
interface AuditedCall {
	id: string;
	sid: string | null;
	tokenName?: string;
	client?: string | null;
	tool: string;
	args: unknown;
	task?: string;
}

/** Audit seam: `start` is awaited before the tool runs, `done` before the response goes out. */
export interface CallAudit {
	start(call: AuditedCall): Promise<void>;
	done(
		call: AuditedCall & {
			isError: boolean;
			cancelled?: boolean;
			/** The caller had gone away (2025 eras) before the call ended. */
			abandoned?: boolean;
		},
	): Promise<void>;
	/** A call refused before it began (contract §16): coalesced per token, so a flood cannot rotate history away. */
	refused?(call: AuditedCall & { reason: string }): void;
	/**
	 * Before a call registers (contract §19): 0 when its token's audit budget pays for its records, else the
	 * milliseconds until it would; a refused call is counted as a refusal there, the caller answers `audit_budget`.
	 */
	admit?(call: AuditedCall): number;
}

export interface BridgeDeps {
	version: string;
	/** The server `instructions` of both eras: fixed text, or built at each handshake (the host's tools can change). */
	instructions: string | (() => string);
	listTools(): McpTool[];
	callTool(req: ToolCallRequest): Promise<ToolCallOutcome>;
	/** Why the host cannot serve `method` (a missing host fact, named), else null: answered `host_fact_missing`. */
	unavailable?(method: "tools/list" | "tools/call"): string | null;
	audit?: CallAudit;
	/** One line to host stderr (never stdout: that is the host's rpc channel). */
	log(line: string): void;
	/** The server's one clock (core/clock.ts `SYSTEM_CLOCK` when absent). */
	clock?: Clock;
}

/**
 * The connection a request came on (core/idle.ts): long work switches its idle timer off for its own
 * duration, and a stalled upload asks for it to close.
 */
export interface Connection {
	/** Switches the idle timer off; the returned function switches it back on (idempotent). */
	holdOpen(): () => void;
	/** Makes the connection close within a few seconds unless it finishes first. */
	closeSoon(): void;
	/**
	 * Ends the connection now with a TCP reset: what the kernel still queued to send is dropped, not drained to
	 * the peer. False when it could not (not found, not Linux): it then closes soon instead.
	 */
	cut(): boolean;
	/** Whether Bun is done with the request (response sent, or client gone); null when nobody knows. */
	sent(): boolean | null;
	/** Bytes the kernel still holds for the client on this connection; null when unknown. */
	queued(): number | null;
}

/** What an extra route gets besides the request: who is calling, and the connection it came on. */
export interface RouteContext extends CallerInfo {
	conn: Connection;
	/** The body the pipeline read under the route's body duty (`ExtraRoute.body`); absent for GET, HEAD and streams. */
	body?: Uint8Array;
	/** Aborts when the caller's secret is revoked or rotated away (contract §16): a running transfer stops. */
	ended?: AbortSignal;
	/** The identity checked again (contract §16): the 401 a new request would get once the secret is gone. */
	recheck(): Response | undefined;
	/**
	 * A slot of `kind` for this caller from the one registry (core/holdings.ts), ended by `onEnd` if its
	 * token is revoked or rotated; or why there is none (contract §16, §19). `joins`: see `TokenHoldings.take`.
	 */
	take(kind: SlotKind, onEnd?: (reason: string) => void, joins?: string): Taken;
}

/** Extra authenticated routes (`/blob`, `/host-llm`) plugged in by their own modules. */
export interface ExtraRoute {
	methods: readonly string[];
	/**
	 * Applied by default (route-kit `serveRoute`): a non-GET body read within `max` (`refuse`: the 413), the caller
	 * re-checked once it is in (§16), the bytes as `ctx.body`. Opt out by name: `"stream"` (then `watchIdentity`).
	 */
	body: { max: number; refuse: (code: "body_too_large", message: string) => Response } | "stream";
	/** The bounds of the slot kinds the route takes (e.g. `/blob`: uploads, downloads). */
	bounds?: Partial<Record<SlotKind, SlotBound>>;
	handle(req: Request, ctx: RouteContext): Promise<Response>;
}

export interface ServerOptions {
	/** The owner token's secret (token name `owner`). */
	ownerSecret: string;
	/** Named tokens beside it (contract §14), as the config file spells them (`token` is the secret). */
	tokens?: ReadonlyArray<{ name: string; token: string }>;
	bindHost: string;
	isLoopbackBind: boolean;
	allowedOrigins: readonly string[];
	routes?: Record<string, ExtraRoute>;
	/** SSE timing overrides (tests only). */
	sse?: SseTimings;
	/** Idle TTL (default SESSION_TTL_MS; shorter only through a testing knob, src/config/knobs.ts). */
	sessionTtlMs?: number;
	/** The Tasks window (default TASK_WINDOW_MS; shorter only through a testing knob, src/config/knobs.ts). */
	taskWindowMs?: number;
	/** Bounds of kinds the host adapter takes (approval prompts: its queue's bound per token); none when absent. */
	bounds?: Partial<Record<SlotKind, SlotBound>>;
}

export interface InFlightCall {
	id: string;
	sid: string | null;
	/** The name of the token that made the call. */
	tokenName: string;
	client: string | null;
	tool: string;
	startedAt: number;
	controller: AbortController;
	cancelled: boolean;
	/** The caller went away without cancelling (legacy era); the call runs on. */
	abandoned?: boolean;
	/**
	 * The task id, set once the call was answered with a task handle (contract §17): it runs on as
	 * that task, its records name it, and closing the request's stream no longer cancels it.
	 */
	task?: string;
}
