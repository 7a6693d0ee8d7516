/**
 * The life of a `tools/call` (contract §6.4): the in-flight table (bounded, keyed by session and
 * request id), the two audit records around the tool run, the JSON or SSE response, and
 * cancellation. A cancelled call is answered at once; the tool's own abort stops the work, and the
 * call keeps its slot until it has (contract §15). The connection's idle timer is off while it runs.
 * Each era hands over its rules (`EraRules`); the table knows no era by name.
 */
import { errorDetail } from "../text/error-text.ts";
import { ERRORS, type ErrorKind, type RpcId, rpcError, rpcErrorMessage, rpcResult } from "./errors.ts";
import { isRecord } from "./jsonrpc.ts";
import { acceptsEventStream, openSseCall, type ProgressToken, type SseTimings } from "./progress.ts";
import { abort, runCall } from "./run.ts";
import { fairShare } from "./sessions.ts";
import { answerOrTask, detachable, type TaskMode } from "./task-route.ts";
import type { BridgeDeps, CallerInfo, Connection, InFlightCall, ToolCallOutcome } from "./types.ts";

/** @internal */
export const MAX_CALLS_IN_FLIGHT = 256;

const callKey = (sid: string, id: RpcId): string => `${sid}\u0000${typeof id}:${String(id)}`;

/** How an era's calls behave where the eras differ (contract §6.4, §13). */
export interface EraRules {
	/**
	 * The client closing the request's connection (Bun: `req.signal`): the era's cancel (2026-07-28,
	 * no session), or a caller gone without cancelling whose call runs on, marked abandoned (2025).
	 */
	onClosed: "cancel" | "abandon";
	/** Members every result of the era carries (2026-07-28: `resultType`, `_meta` serverInfo). */
	resultExtra: Readonly<Record<string, unknown>>;
	/** The row for `tools/call` params without a string `name` or with non-object `arguments`. */
	invalidParams: ErrorKind;
}

/** One `tools/call` as an era hands it over. */
export interface CallStart {
	id: RpcId;
	params: Record<string, unknown> | undefined;
	caller: CallerInfo;
	req: Request;
	conn: Connection;
	/** 2026-07-28: the request declared the Tasks extension (contract §17); it may become a task. */
	task?: Omit<TaskMode, "detach">;
}

export class CallTable {
	readonly inFlight = new Map<string, InFlightCall>();
	callsServed = 0;
	readonly #deps: BridgeDeps;
	readonly #now: () => number;
	readonly #sse: SseTimings | undefined;
	readonly #liveTokens: () => number;

	constructor(deps: BridgeDeps, sse?: SseTimings, liveTokens: () => number = () => 1) {
		this.#deps = deps;
		this.#now = deps.now ?? Date.now;
		this.#sse = sse;
		this.#liveTokens = liveTokens;
	}

	/** Contract §16: a token holds at most its share of the slots (stopping calls included). */
	#overShare(tokenName: string): boolean {
		const share = fairShare(MAX_CALLS_IN_FLIGHT, this.#liveTokens());
		let own = 0;
		for (const c of this.inFlight.values()) if (c.tokenName === tokenName && ++own >= share) return true;
		return false;
	}

	hasCalls(sid: string): boolean {
		for (const c of this.inFlight.values()) if (c.sid === sid) return true;
		return false;
	}

	/** `notifications/cancelled`: unknown or finished ids are ignored. */
	cancel(sid: string, requestId: RpcId): void {
		const call = this.inFlight.get(callKey(sid, requestId));
		if (call) abort(call);
	}

	cancelSession(sid: string): void {
		for (const call of this.inFlight.values()) if (call.sid === sid) abort(call);
	}

	/** Cancels every call made with the token `name` (revoked or rotated). */
	cancelToken(name: string): void {
		for (const call of this.inFlight.values()) if (call.tokenName === name) abort(call);
	}

	cancelAll(): void {
		for (const call of this.inFlight.values()) abort(call);
	}

	async start(rules: EraRules, { id, params, caller, req, conn, task }: CallStart): Promise<Response> {
		const name = params?.name;
		const args = params && "arguments" in params ? params.arguments : {};
		if (typeof name !== "string" || !isRecord(args)) return rpcError(rules.invalidParams, id);
		const callId = crypto.randomUUID();
		// Without a session, request ids are not unique: each modern call is its own key.
		const key = caller.sid === null ? `\u0001${callId}` : callKey(caller.sid, id);
		if (this.inFlight.has(key)) return rpcError("invalid_request", id);
		const full = this.inFlight.size >= MAX_CALLS_IN_FLIGHT;
		if (full || this.#overShare(caller.tokenName)) return rpcError("server_busy", id);
		const call: InFlightCall = {
			id: callId,
			sid: caller.sid,
			tokenName: caller.tokenName,
			client: caller.client,
			tool: name,
			startedAt: this.#now(),
			controller: new AbortController(),
			cancelled: false,
		};
		this.inFlight.set(key, call);
		// A task outlives its stream: once the handle is sent, a close no longer cancels.
		const closed = detachable(rules.onClosed === "cancel" ? req.signal : undefined);
		const unwatch = rules.onClosed === "abandon" ? watchCaller(req.signal, call) : noop;
		const release = conn.holdOpen();
		const progressToken = progressTokenOf(params);
		const accept = req.headers.get("accept");
		const sse =
			progressToken !== null && !task && acceptsEventStream(accept) ? openSseCall(progressToken, this.#sse) : null;
		const ended = (still: Promise<unknown> | null) => {
			this.inFlight.delete(key);
			if (still !== null) this.#holdSlot(call, still);
		};
		// Output before the task exists is kept, so the task starts with it.
		let latest = "";
		const progress = task
			? (text: string) => {
					latest = text;
					task.store.progress(task.taskId, text);
				}
			: undefined;
		const run = runCall(this.#deps, {
			call,
			args,
			sse,
			caller,
			closed: closed.signal,
			ended,
			progress,
		})
			.then(outcome => {
				this.callsServed++;
				return outcome;
			})
			.finally(() => {
				unwatch();
				release();
			});
		const result = (o: ToolCallOutcome) => ({ content: o.content, isError: o.isError, ...rules.resultExtra });
		const plain = (outcome: ToolCallOutcome | null): Response => {
			if (outcome === null) return rpcError("request_cancelled", id);
			if (outcome.invalidArgs !== undefined) return rpcErrorMessage("invalid_params", id, outcome.invalidArgs);
			return rpcResult(id, result(outcome));
		};
		if (task) {
			return answerOrTask(
				{ ...task, detach: closed.detach },
				{
					id,
					owner: caller.tokenName,
					client: caller.client,
					tool: name,
					run,
					answer: plain,
					result,
					cancel: () => abort(call),
					output: () => latest,
					answered: () => {
						call.task = task.taskId;
						release();
					},
					log: this.#deps.log,
					extra: rules.resultExtra,
				},
			);
		}
		if (sse === null) return plain(await run);
		run.then(
			outcome => sse.finish(outcome === null ? null : { jsonrpc: "2.0", id, ...answerOf(outcome, result) }),
			err => {
				this.#deps.log(`a2a-bridge: internal error in tools/call '${name}': ${errorDetail(err)}`);
				const { code, message } = ERRORS.internal_error;
				return sse.finish({ jsonrpc: "2.0", id, error: { code, message } });
			},
		);
		return sse.response;
	}

	/**
	 * The caller was answered (cancelled) but the tool has not stopped yet: the call keeps counting
	 * against the cap under a key no request id can reach, until the tool's promise settles.
	 */
	#holdSlot(call: InFlightCall, work: Promise<unknown>): void {
		const key = `\u0001stopping:${call.id}`;
		this.inFlight.set(key, call);
		const drop = () => this.inFlight.delete(key);
		work.then(drop, drop);
	}
}

const noop = (): void => {};

/** The wire answer for a finished call: its result, or `-32602` naming the argument the tool refused. */
function answerOf(
	outcome: ToolCallOutcome,
	result: (o: ToolCallOutcome) => Record<string, unknown>,
): Record<string, unknown> {
	if (outcome.invalidArgs !== undefined) {
		return { error: { code: ERRORS.invalid_params.code, message: outcome.invalidArgs } };
	}
	return { result: result(outcome) };
}

/**
 * `onClosed: "abandon"` (2025): a caller that disconnects without `notifications/cancelled` does not cancel;
 * the call is marked abandoned so `/a2a` can show it.
 */
function watchCaller(signal: AbortSignal, call: InFlightCall): () => void {
	const onGone = () => {
		if (!call.cancelled) call.abandoned = true;
	};
	if (signal.aborted) onGone();
	else signal.addEventListener("abort", onGone, { once: true });
	return () => signal.removeEventListener("abort", onGone);
}

function progressTokenOf(params: Record<string, unknown> | undefined): ProgressToken | null {
	const meta = params?._meta;
	if (!isRecord(meta)) return null;
	const t = meta.progressToken;
	return typeof t === "string" || (typeof t === "number" && Number.isFinite(t)) ? t : null;
}
