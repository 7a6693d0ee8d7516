/**
 * The approver is a slot with a share (contract §19): remote calls' dialogs reach the host's UI one at a
 * time, the next taken round-robin across tokens. A waiting prompt holds a `prompts` slot of the one
 * registry (core/holdings.ts), which bounds them per token and in all and ends them on revocation; the one
 * on screen holds none (its call's slot closes it). The queue decides turns only: a refusal here (queue
 * full, no turn in time, token revoked) ends the call with a clear error before any prompt shows; approve
 * or deny is only ever the person's answer, or their "deny this token's queue" (`/a2a deny-queue NAME`).
 * One queue per process, on `globalThis`, since the host's UI wrapper is process-wide too.
 */
import type { Clock, SlotBound, Taken } from "../core/types.ts";

/** What a prompt denied by the person's "deny this token's queue" answers instead of a chosen option. */
export const DENIED: unique symbol = Symbol("denied with the token's whole queue");

/** A call ended by the queue itself; the tool never ran and no prompt was shown. Told by its name (bridge.ts). @internal */
export class QueueRefusal extends Error {
	override readonly name = "QueueRefusal";
}

interface QueueBounds {
	/** Prompts one token may have waiting (the one on screen not counted): the registry's bound (`promptBound`). */
	perToken: number;
	/** How long a prompt may wait for its turn before its call is refused. */
	maxWaitMs: number;
}

/** @internal */
export const DEFAULT_BOUNDS: QueueBounds = { perToken: 3, maxWaitMs: 600_000 };
/** Waiting prompts of all tokens together (the bridge's cap on calls in flight); only caps a runaway. @internal */
export const MAX_WAITING = 256;

/** The registry's bound of the `prompts` kind (core/holdings.ts) for `perToken` waiting per token. */
const promptBound = (perToken: number): SlotBound => ({ each: perToken, total: MAX_WAITING });

/** A `prompts` slot of the call's token from the registry, ended by `onEnd` on revocation (ToolCallRequest.take). */
export type TakePrompt = (onEnd: (reason: string) => void) => Taken;
/** @internal */
export const ENV_QUEUE = "A2A_BRIDGE_APPROVAL_QUEUE";
/** @internal */
export const ENV_WAIT = "A2A_BRIDGE_APPROVAL_WAIT_S";
const MAX_PER_TOKEN = MAX_WAITING;
const MAX_WAIT_S = 24 * 60 * 60;

/** The bounds from the environment (`npm run host` sets both); a bad value keeps the default and says so. @internal */
export function queueBoundsFromEnv(env: Record<string, string | undefined>): {
	bounds: QueueBounds;
	warnings: string[];
} {
	const bounds = { ...DEFAULT_BOUNDS };
	const warnings: string[] = [];
	const queue = env[ENV_QUEUE];
	if (queue !== undefined) {
		if (/^\d{1,3}$/.test(queue) && Number(queue) >= 1 && Number(queue) <= MAX_PER_TOKEN)
			bounds.perToken = Number(queue);
		else warnings.push(`${ENV_QUEUE} is not a whole number in 1..${MAX_PER_TOKEN}; kept ${bounds.perToken}`);
	}
	const wait = env[ENV_WAIT];
	if (wait !== undefined) {
		const s = Number(wait);
		if (/^\d{1,5}(\.\d{1,3})?$/.test(wait) && s > 0 && s <= MAX_WAIT_S) bounds.maxWaitMs = Math.round(s * 1000);
		else warnings.push(`${ENV_WAIT} is not a number of seconds in (0, ${MAX_WAIT_S}]; kept ${bounds.maxWaitMs / 1000}`);
	}
	return { bounds, warnings };
}

type Open = (signal: AbortSignal) => unknown;

interface Waiting {
	token: string;
	open: Open;
	signal: AbortSignal;
	resolve(value: unknown): void;
	reject(err: Error): void;
	/** Stops the wait timer and the cancellation listener. */
	release(): void;
}

const realClock: Clock = {
	now: () => Date.now(),
	after: (ms, fn) => {
		const t = setTimeout(fn, ms);
		return () => clearTimeout(t);
	},
};

const cancelled = (): Error => new Error("the call was cancelled while its approval prompt waited for its turn");
const revokedRefusal = (token: string): QueueRefusal =>
	new QueueRefusal(`token '${token}' was revoked while its approval prompt waited`);

export class PromptQueue {
	/** Waiting prompts by token; the map's order is the round-robin order (a token moves to the end after its turn). */
	readonly #waiting = new Map<string, Waiting[]>();
	#shown: { token: string; stop: AbortController; settle(value: unknown): void } | undefined;
	#maxWaitMs: number;
	readonly #clock: Clock;

	constructor(maxWaitMs = DEFAULT_BOUNDS.maxWaitMs, clock: Clock = realClock) {
		this.#maxWaitMs = maxWaitMs;
		this.#clock = clock;
	}

	/** How long prompts asked from now on may wait for their turn. */
	configure(maxWaitMs: number): void {
		this.#maxWaitMs = maxWaitMs;
	}

	/**
	 * Opens the dialog (`open`, given a signal that closes it) when it is `token`'s turn, waiting in a slot
	 * `take` gives. Resolves with what the dialog answered, or `DENIED`; rejects with a `QueueRefusal` or on
	 * cancellation while waiting.
	 */
	run(token: string, signal: AbortSignal, open: Open, take: TakePrompt): Promise<unknown> {
		return new Promise((resolve, reject) => {
			if (signal.aborted) return reject(cancelled());
			let w: Waiting | undefined;
			const taken = take(() => w && this.#drop(w, revokedRefusal(token)));
			if (!taken.ok) {
				if (taken.code === "revoked") return reject(revokedRefusal(token));
				return reject(new QueueRefusal(taken.code === "share" ? fullText(token, taken.held) : allFullText()));
			}
			const waitMs = this.#maxWaitMs;
			const onAbort = (): void => w && this.#drop(w, cancelled());
			const stopTimer = this.#clock.after(waitMs, () => w && this.#drop(w, new QueueRefusal(lateText(waitMs))));
			w = {
				token,
				open,
				signal,
				resolve,
				reject,
				release: () => {
					stopTimer();
					signal.removeEventListener("abort", onAbort);
					taken.slot.release();
				},
			};
			signal.addEventListener("abort", onAbort, { once: true });
			const mine = this.#waiting.get(token) ?? [];
			mine.push(w);
			this.#waiting.set(token, mine);
			this.#next();
		});
	}

	/** The person denied `token`'s whole queue: its shown prompt and every waiting one answer Deny. */
	denyToken(token: string): number {
		const list = this.#waiting.get(token) ?? [];
		this.#waiting.delete(token);
		for (const w of list) {
			w.release();
			w.resolve(DENIED);
		}
		const shown = this.#shown;
		if (shown?.token !== token) return list.length;
		// The call ends now; the dialog is closed and the next shows once the UI says it closed.
		shown.settle(DENIED);
		shown.stop.abort();
		return list.length + 1;
	}

	/** Waiting prompts per token, in turn order, and the token whose prompt is on screen. */
	snapshot(): { shown: string | undefined; waiting: Array<[string, number]> } {
		return { shown: this.#shown?.token, waiting: [...this.#waiting].map(([t, l]) => [t, l.length]) };
	}

	#drop(w: Waiting, err: Error): void {
		const list = this.#waiting.get(w.token);
		const i = list?.indexOf(w) ?? -1;
		if (list === undefined || i < 0) return;
		list.splice(i, 1);
		if (list.length === 0) this.#waiting.delete(w.token);
		w.release();
		w.reject(err);
	}

	/** Shows the next prompt, round-robin across tokens, when no remote dialog is open. */
	#next(): void {
		if (this.#shown !== undefined) return;
		const first = this.#waiting.entries().next();
		if (first.done) return;
		const [token, list] = first.value;
		const w = list.shift() as Waiting;
		if (list.length === 0) this.#waiting.delete(token);
		w.release();
		const stop = new AbortController();
		let done = false;
		const settle = (value: unknown, failed = false): void => {
			if (done) return;
			done = true;
			if (failed) w.reject(value as Error);
			else w.resolve(value);
		};
		this.#shown = { token, stop, settle };
		const signal = AbortSignal.any([w.signal, stop.signal]);
		Promise.resolve()
			.then(() => w.open(signal))
			.then(
				v => settle(v),
				e => settle(e instanceof Error ? e : new Error(String(e)), true),
			)
			.finally(() => {
				this.#shown = undefined;
				// Its turn is over: the token goes behind every token that waited meanwhile.
				const rest = this.#waiting.get(token);
				if (rest !== undefined) {
					this.#waiting.delete(token);
					this.#waiting.set(token, rest);
				}
				this.#next();
			});
	}
}

const fullText = (token: string, n: number): string =>
	`approval queue full: token '${token}' already has ${n} prompts waiting for the host's approver (the bound per ` +
	"token); this call did not run and was not denied: retry when one is answered";
const allFullText = (): string =>
	`approval queue full: ${MAX_WAITING} prompts wait for the host's approver; this call did not run and was not denied`;
const lateText = (ms: number): string =>
	`no turn at the host's approver within ${Math.round(ms / 1000)} s (other prompts were ahead); ` +
	"this call did not run and was not denied";

const QUEUE_KEY = Symbol.for("pi-a2a-ext.prompt-queue");

/** The process's queue: every binding's wrapper and the `/a2a` command reach the same one. */
export function processPromptQueue(): PromptQueue {
	const g = globalThis as Record<symbol, PromptQueue | undefined>;
	g[QUEUE_KEY] ??= new PromptQueue();
	return g[QUEUE_KEY];
}

/**
 * Sets the process's queue up from the environment at start: its wait bound applied, each bad value warned
 * about; returns the registry's bound for waiting prompts.
 */
export function startPromptQueue(env: Record<string, string | undefined>, warn: (line: string) => void): SlotBound {
	const queue = queueBoundsFromEnv(env);
	processPromptQueue().configure(queue.bounds.maxWaitMs);
	for (const w of queue.warnings) warn(w);
	return promptBound(queue.bounds.perToken);
}
