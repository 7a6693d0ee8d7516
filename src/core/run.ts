/**
 * One tool run between its `start` and `done` audit records (contract §6.4, §9): the `start` is
 * awaited before the tool runs, the `done` before the caller is answered, also on failure. The run
 * says how it ended and whether the tool still runs; the table alone decides what that means for the slot.
 */
import type {
	BridgeDeps,
	CallAudit,
	CallerInfo,
	InFlightCall,
	Settled,
	ToolCallOutcome,
	ToolCallRequest,
} from "./types.ts";

/** What the table hands the run of one call. */
export interface RunInputs {
	call: InFlightCall;
	args: Record<string, unknown>;
	caller: CallerInfo;
	/** 2026-07-28: aborts when the client closes the stream (the era's cancel), unless the call detached. */
	closed: AbortSignal | undefined;
	/** The call's output so far, for its answer port (an SSE stream, a task's `statusMessage`). */
	progress?: ((text: string) => void) | undefined;
	/** The host backgrounded the call (SSE only). */
	backgrounded?: (() => void) | undefined;
	/**
	 * The task id once the answer port lets the call go on without its request (a task handle was sent):
	 * from then on a close no longer cancels, and the records name the task.
	 */
	detached?: Promise<string> | undefined;
	/** A slot of the registry for the call's token (the host's prompt queue takes its prompts here). */
	take: ToolCallRequest["take"];
}

/** How a run ended: the outcome (null: cancelled) or the bridge's own failure, and the tool's work if it goes on. */
export interface CallEnd {
	outcome: Settled<ToolCallOutcome | null>;
	/** The tool's promise when the caller was answered before the tool stopped (a cancel), else null. */
	stillRunning: Promise<unknown> | null;
}

/** Runs one call between its two audit records; never rejects: a failure is in the returned `outcome`. */
export async function runCall(deps: BridgeDeps, run: RunInputs): Promise<CallEnd> {
	const { call, closed } = run;
	let task: string | undefined;
	run.detached?.then(id => {
		task = id;
	});
	const onClose = () => {
		if (task === undefined) abort(call);
	};
	if (closed?.aborted) abort(call);
	closed?.addEventListener("abort", onClose, { once: true });
	const records = auditBracket(deps.audit, call, run, () => task);
	const tool = startTool(deps, run, records.begin);
	try {
		const value = await betweenRecords(deps.audit, records, tool.work, call);
		return { outcome: { ok: true, value }, stillRunning: tool.stillRunning() };
	} catch (error) {
		return { outcome: { ok: false, error }, stillRunning: tool.stillRunning() };
	} finally {
		closed?.removeEventListener("abort", onClose);
	}
}

interface Records {
	/** The fields every record of the call names, with its task once it has one. */
	current(): Parameters<CallAudit["start"]>[0];
	/** Writes the `start` record once (the host adapter calls it just before the tool runs). */
	begin(): Promise<void>;
	begun(): boolean;
}

function auditBracket(
	audit: CallAudit | undefined,
	call: InFlightCall,
	run: RunInputs,
	task: () => string | undefined,
): Records {
	const { tokenName, client } = run.caller;
	const fixed = { id: call.id, sid: call.sid, tokenName, client, tool: call.tool, args: run.args };
	let begun = false;
	const current = () => {
		const t = task();
		return t === undefined ? fixed : { ...fixed, task: t };
	};
	return {
		current,
		begun: () => begun,
		begin: async () => {
			if (begun) return;
			begun = true;
			await audit?.start(current());
		},
	};
}

/** Hands the call to the host; `stillRunning` is the tool's promise while it has not settled. */
function startTool(deps: BridgeDeps, run: RunInputs, begin: () => Promise<void>) {
	const { call, progress, backgrounded } = run;
	let settled = false;
	// An async wrapper: a host that throws at once fails like one that rejects.
	const work = (async () =>
		deps.callTool({
			callId: call.id,
			name: call.tool,
			args: run.args,
			signal: call.controller.signal,
			caller: run.caller,
			take: run.take,
			begin,
			...(progress ? { onProgress: progress } : {}),
			...(backgrounded ? { onBackgrounded: backgrounded } : {}),
		}))();
	// Registered first, so it is set before raceAbort hands the outcome back.
	const done = () => {
		settled = true;
	};
	work.then(done, done);
	return { work, stillRunning: (): Promise<unknown> | null => (settled ? null : work) };
}

async function betweenRecords(
	audit: CallAudit | undefined,
	records: Records,
	work: Promise<ToolCallOutcome>,
	call: InFlightCall,
): Promise<ToolCallOutcome | null> {
	let outcome: ToolCallOutcome | null;
	try {
		outcome = await raceAbort(work, call.controller.signal);
	} catch (err) {
		// Every start gets its done, even when the bridge itself fails (answered 500 at the edge).
		await records.begin();
		await audit?.done({ ...records.current(), isError: true });
		throw err;
	}
	if (!records.begun() && outcome?.refused) {
		audit?.refused?.({ ...records.current(), reason: refusalText(outcome) });
		return outcome;
	}
	// An adapter that does not call `begin` (or a call cancelled before it): start and done are written now.
	await records.begin();
	await audit?.done({
		...records.current(),
		isError: outcome === null || outcome.isError,
		...(call.cancelled ? { cancelled: true } : {}),
		...(call.abandoned ? { abandoned: true } : {}),
	});
	return outcome;
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
