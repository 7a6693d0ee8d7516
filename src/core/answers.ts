/**
 * How a running call's outcome reaches its caller: one answer port per call, chosen by the era's
 * rules (calls.ts): a JSON response, an SSE stream with progress, or a task (task-answer.ts). The
 * call table runs the call and hands it over; the port alone decides the response, and holds the
 * request's connection open for as long as that response still needs the call.
 */
import { errorDetail } from "../text/error-text.ts";
import { errorObject, type RpcId, rpcError, rpcErrorMessage, rpcResult } from "./errors.ts";
import { isRecord } from "./jsonrpc.ts";
import type { EraReplies } from "./methods.ts";
import { acceptsEventStream, SseStream, type SseTimings } from "./progress.ts";
import type { Clock, Connection, InFlightCall, ToolCallOutcome } from "./types.ts";

/** A call the table has registered and started, as its port gets it. */
export interface CallToAnswer {
	id: RpcId;
	/** The table's record of the call: who made it, its tool; `abort` stops it. */
	call: InFlightCall;
	/** The call's outcome once it ran between its audit records; null when it was cancelled. */
	outcome: Promise<ToolCallOutcome | null>;
	/** The era's voice: its results carry its members (`EraRules.replies`). */
	era: EraReplies;
	conn: Connection;
	log(line: string): void;
}

export interface AnswerPort {
	/** Where the call's output goes while it runs (an SSE stream, a task's `statusMessage`); absent: nowhere. */
	progress?: (text: string) => void;
	/** The host backgrounded the call and stopped forwarding output. */
	backgrounded?: () => void;
	/** The task id once the call goes on without its request (a task handle was sent); never settles otherwise. */
	detached?: Promise<string>;
	answer(handed: CallToAnswer): Response | Promise<Response>;
}

/** The result of a finished call as the era carries it. */
export const callResult = (o: ToolCallOutcome, era: EraReplies): Record<string, unknown> =>
	era.body({ content: o.content, isError: o.isError });

/**
 * The plain answer for an outcome: its result, `-32602` naming the argument the tool refused, or `-32800`.
 * Both are outcomes of a call that ran, answered at the row's status in every era (docs/protocol.md).
 */
export function plainAnswer(id: RpcId, outcome: ToolCallOutcome | null, era: EraReplies) {
	if (outcome === null) return rpcError("request_cancelled", id);
	if (outcome.invalidArgs !== undefined) return rpcErrorMessage("invalid_params", id, outcome.invalidArgs);
	return rpcResult(id, callResult(outcome, era));
}

/** One JSON response once the call ends. */
const JSON_ANSWER: AnswerPort = {
	async answer(r) {
		const release = r.conn.holdOpen();
		try {
			return plainAnswer(r.id, await r.outcome, r.era);
		} finally {
			release();
		}
	},
};

/** An SSE stream: progress notifications while the call runs, then its answer as the final message. */
function sseAnswer(token: string | number, timings: SseTimings | undefined, clock: Clock): AnswerPort {
	const sse = new SseStream(token, timings, clock);
	return {
		progress: text => sse.progress(text),
		backgrounded: () => sse.backgrounded(),
		answer(r) {
			const release = r.conn.holdOpen();
			r.outcome.finally(release).then(
				outcome => sse.finish(outcome === null ? null : { jsonrpc: "2.0", id: r.id, ...finalMessage(outcome, r.era) }),
				err => {
					r.log(`a2a-bridge: internal error in tools/call '${r.call.tool}': ${errorDetail(err)}`);
					return sse.finish({ jsonrpc: "2.0", id: r.id, error: errorObject("internal_error") });
				},
			);
			return sse.response;
		},
	};
}

function finalMessage(outcome: ToolCallOutcome, era: EraReplies): Record<string, unknown> {
	if (outcome.invalidArgs !== undefined) return { error: errorObject("invalid_params", outcome.invalidArgs) };
	return { result: callResult(outcome, era) };
}

/** Both eras' default: an SSE stream when the call has a progress token and `Accept` lists the stream, else JSON. */
export function streamOrJson(
	params: Record<string, unknown> | undefined,
	accept: string | null,
	timings: SseTimings | undefined,
	clock: Clock,
): AnswerPort {
	const meta = params?._meta;
	const token = isRecord(meta) ? meta.progressToken : undefined;
	const valid = typeof token === "string" || (typeof token === "number" && Number.isFinite(token));
	return valid && acceptsEventStream(accept) ? sseAnswer(token, timings, clock) : JSON_ANSWER;
}
