/**
 * One tool run between its `start` and `done` audit records (contract §6.4, §9): the `start` is
 * awaited before the tool runs, the `done` before the caller is answered, also on failure.
 */
import type { BridgeDeps, CallerInfo, InFlightCall, ToolCallOutcome, ToolCallRequest } from "./types.ts";

export interface CallRun {
	call: InFlightCall;
	args: Record<string, unknown>;
	caller: CallerInfo;
	/** 2026-07-28: aborts when the client closes the stream (the era's cancel), unless the call became a task. */
	closed: AbortSignal | undefined;
	/** The call's output so far, for its answer port (an SSE stream, a task's `statusMessage`). */
	progress?: ((text: string) => void) | undefined;
	/** The host backgrounded the call (SSE only). */
	backgrounded?: (() => void) | undefined;
	/** A slot of the registry for the call's token (the host's prompt queue takes its prompts here). */
	take: ToolCallRequest["take"];
	/** The call leaves the table, with the tool's promise if the tool has not stopped yet. */
	leave(stillRunning: Promise<unknown> | null): void;
}

/** Runs one call between its two audit records; resolves null when the call was cancelled. */
export async function runCall(deps: BridgeDeps, run: CallRun): Promise<ToolCallOutcome | null> {
	const { call, args, caller, closed, progress, backgrounded } = run;
	const fixed = {
		id: call.id,
		sid: call.sid,
		tokenName: caller.tokenName,
		client: caller.client,
		tool: call.tool,
		args,
	};
	// `call.task` is set once the call has become a task; a declaring call that ends within its window never was one.
	const current = () => (call.task === undefined ? fixed : { ...fixed, task: call.task });
	// A task outlives its stream: once the handle is sent, a close no longer cancels.
	const onClose = () => {
		if (call.task === undefined) abort(call);
	};
	if (closed?.aborted) abort(call);
	closed?.addEventListener("abort", onClose, { once: true });
	let work: Promise<ToolCallOutcome> | undefined;
	let settled = false;
	let begun = false;
	const begin = async () => {
		if (begun) return;
		begun = true;
		await deps.audit?.start(current());
	};
	try {
		let outcome: ToolCallOutcome | null;
		try {
			work = deps.callTool({
				callId: call.id,
				name: call.tool,
				args,
				signal: call.controller.signal,
				caller,
				take: run.take,
				begin,
				...(progress ? { onProgress: progress } : {}),
				...(backgrounded ? { onBackgrounded: backgrounded } : {}),
			});
			// Registered first, so it is set before raceAbort hands the outcome back.
			const done = () => {
				settled = true;
			};
			work.then(done, done);
			outcome = await raceAbort(work, call.controller.signal);
		} catch (err) {
			// Every start gets its done, even when the bridge itself fails (answered 500 at the edge).
			await begin();
			await deps.audit?.done({ ...current(), isError: true });
			throw err;
		}
		if (!begun && outcome?.refused) {
			deps.audit?.refused?.({ ...current(), reason: refusalText(outcome) });
			return outcome;
		}
		// An adapter that does not call `begin` (or a call cancelled before it): start and done are written now.
		await begin();
		await deps.audit?.done({
			...current(),
			isError: outcome === null || outcome.isError,
			...(call.cancelled ? { cancelled: true } : {}),
			...(call.abandoned ? { abandoned: true } : {}),
		});
		return outcome;
	} finally {
		closed?.removeEventListener("abort", onClose);
		run.leave(work !== undefined && !settled ? work : null);
	}
}

const refusalText = (o: ToolCallOutcome): string =>
	o.invalidArgs ?? o.content.map(c => (c.type === "text" ? c.text : "")).join(" ");

export function abort(call: InFlightCall): void {
	call.cancelled = true;
	call.controller.abort(new Error("request cancelled"));
}

/** Resolves with the promise's value, or null as soon as the signal aborts (the work may go on). */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T | null> {
	if (signal.aborted) return Promise.resolve(null);
	return new Promise<T | null>((resolve, reject) => {
		const onAbort = () => resolve(null);
		signal.addEventListener("abort", onAbort, { once: true });
		work.then(
			v => {
				signal.removeEventListener("abort", onAbort);
				resolve(signal.aborted ? null : v);
			},
			e => {
				signal.removeEventListener("abort", onAbort);
				if (signal.aborted) resolve(null);
				else reject(e);
			},
		);
	});
}
