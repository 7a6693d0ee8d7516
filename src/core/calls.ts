/**
 * The life of a `tools/call` (contract §6.4): the in-flight table (bounded, keyed by session and
 * request id) checks a call, registers it, runs it between its two audit records and hands it to
 * one answer port (answers.ts) chosen by the era's rules. A cancelled call is answered at once; the
 * tool's own abort stops the work, and the call keeps its slot until it has (contract §15). Each era
 * hands over its rules (`EraRules`); the table knows no era by name.
 */
import type { AnswerPort } from "./answers.ts";
import { SYSTEM_CLOCK } from "./clock.ts";
import { type RpcId, rpcError, rpcErrorData } from "./errors.ts";
import { NO_SLOTS, TokenHoldings } from "./holdings.ts";
import { isRecord } from "./jsonrpc.ts";
import type { EraReplies } from "./methods.ts";
import { abort, type CallEnd, runCall } from "./run.ts";
import type { BridgeDeps, CallerInfo, Connection, InFlightCall } from "./types.ts";

export const MAX_CALLS_IN_FLIGHT = 256;

const callKey = (sid: string, id: RpcId): string => `${sid}\u0000${typeof id}:${String(id)}`;

/** How an era's calls behave where the eras differ (contract §6.4, §13). */
export interface EraRules {
	/**
	 * The client closing the request's connection (Bun: `req.signal`): the era's cancel (2026-07-28,
	 * no session), or a caller gone without cancelling whose call runs on, marked abandoned (2025).
	 */
	onClosed: "cancel" | "abandon";
	/** The era's voice (core/methods.ts): its status for a bad `tools/call`'s params, its result members. */
	replies: EraReplies;
	/**
	 * How a call is answered (answers.ts): both eras stream SSE when the call asks for progress, else JSON;
	 * 2026-07-28 answers with a task when the request declares the extension.
	 */
	answerPort(params: Record<string, unknown> | undefined, req: Request): AnswerPort;
}

/** One `tools/call` as an era hands it over. */
export interface CallStart {
	id: RpcId;
	params: Record<string, unknown> | undefined;
	caller: CallerInfo;
	req: Request;
	conn: Connection;
}

export class CallTable {
	readonly inFlight = new Map<string, InFlightCall>();
	callsServed = 0;
	readonly #deps: BridgeDeps;
	readonly #now: () => number;
	/** Each call is a slot of the registry of what tokens hold (core/holdings.ts): its share, its revocation. */
	readonly #holdings: TokenHoldings;

	constructor(deps: BridgeDeps, holdings?: TokenHoldings) {
		this.#deps = deps;
		const clock = deps.clock ?? SYSTEM_CLOCK;
		this.#now = () => clock.now();
		this.#holdings = holdings ?? new TokenHoldings({ ...NO_SLOTS, calls: MAX_CALLS_IN_FLIGHT }, () => 1);
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

	cancelAll(): void {
		for (const call of this.inFlight.values()) abort(call);
	}

	async start(rules: EraRules, { id, params, caller, req, conn }: CallStart): Promise<Response> {
		const name = params?.name;
		const args = params && "arguments" in params ? params.arguments : {};
		if (typeof name !== "string" || !isRecord(args)) return rules.replies.error("invalid_params", id);
		const callId = crypto.randomUUID();
		// Without a session, request ids are not unique: each modern call is its own key.
		const key = caller.sid === null ? `\u0001${callId}` : callKey(caller.sid, id);
		if (this.inFlight.has(key)) return rpcError("invalid_request", id);
		const audited = {
			id: callId,
			sid: caller.sid,
			tokenName: caller.tokenName,
			client: caller.client,
			tool: name,
			args,
		};
		// Contract §15, §16: a token takes at most its share; a stopping call keeps its slot until the tool stops.
		const taken = this.#holdings.take("calls", caller, () => abort(call));
		if (!taken.ok) return rpcError("server_busy", id);
		const wait = this.#deps.audit?.admit?.(audited) ?? 0;
		if (wait > 0) {
			taken.slot.release();
			return rpcErrorData("audit_budget", id, { retryAfterS: Math.ceil(wait / 1000) });
		}
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
		const port = rules.answerPort(params, req);
		port.detached?.then(task => {
			call.task = task;
		});
		const unwatch = rules.onClosed === "abandon" ? watchCaller(req.signal, call) : noop;
		const outcome = runCall(this.#deps, {
			call,
			args,
			caller,
			closed: rules.onClosed === "cancel" ? req.signal : undefined,
			progress: port.progress,
			backgrounded: port.backgrounded,
			detached: port.detached,
			take: (kind, onEnd) => this.#holdings.take(kind, caller, onEnd),
		})
			.then(end => this.#leave(key, call, end, taken.slot.release))
			.finally(unwatch);
		return port.answer({ id, call, outcome, era: rules.replies, conn, log: this.#deps.log });
	}

	/** The run ended: the call leaves the table, its slot freed now or, while the tool still runs, once it stops. */
	#leave(key: string, call: InFlightCall, end: CallEnd, release: () => void) {
		this.inFlight.delete(key);
		if (end.stillRunning === null) release();
		else this.#holdSlot(call, end.stillRunning, release);
		if (!end.outcome.ok) throw end.outcome.error;
		this.callsServed++;
		return end.outcome.value;
	}

	/**
	 * The caller was answered (cancelled) but the tool has not stopped yet: the call keeps counting
	 * against the cap under a key no request id can reach, until the tool's promise settles.
	 */
	#holdSlot(call: InFlightCall, work: Promise<unknown>, release: () => void): void {
		const key = `\u0001stopping:${call.id}`;
		this.inFlight.set(key, call);
		const drop = () => {
			this.inFlight.delete(key);
			release();
		};
		work.then(drop, drop);
	}
}

const noop = (): void => {};

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
