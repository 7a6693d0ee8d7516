/**
 * Approval prompts of a cancelled remote call close (contract §13, issue 14). The host's tool wrapper
 * asks `select` with no signal (host fact 6), so the bridge runs each call in an async context holding
 * the call's signal and lends that signal to any `select` opened inside it: the host then closes the
 * dialog itself (the TUI removes it; rpc sends `cancel` with the dialog's id). The same context carries
 * how the call's dialogs are titled (contract §14, §19: whose call it is, and caller text that cannot
 * redraw the prompt; src/host/prompt-text.ts): omp has no supported way to label or shape its prompt,
 * and this wrapper is already the one place that sees it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { showExactlyCut } from "../text/show.ts";
import { DENIED, processPromptQueue, type TakePrompt } from "./prompt-queue.ts";

type Select = (title: string, options: unknown[], opts?: { signal?: AbortSignal } & Record<string, unknown>) => unknown;
export interface PromptUi {
	select: Select;
}

/** The title a remote call's dialog shows instead of the host's (`options` tell an approval from other dialogs). */
export type Retitle = (title: string, options: readonly unknown[]) => string;

const callContext = new AsyncLocalStorage<PromptOwner & { signal: AbortSignal; retitle?: Retitle }>();
const LENT = Symbol.for("pi-a2a-ext.select-lends-call-signal");

/** Whose call it is: the token's name and its `prompts` slots from the one registry (ToolCallRequest.take). */
export interface PromptOwner {
	token: string;
	take: TakePrompt;
}

/**
 * Runs `fn` (a tool's execute) so that prompts it opens close when `signal` aborts, are titled by `retitle`
 * and take their turn in the process's prompt queue as `owner`'s (prompt-queue.ts).
 */
export function withCallSignal<T>(signal: AbortSignal, fn: () => T, owner: PromptOwner, retitle?: Retitle): T {
	return callContext.run(retitle === undefined ? { signal, ...owner } : { signal, retitle, ...owner }, fn);
}

function titled(title: string, options: unknown[], retitle: Retitle | undefined): string {
	if (retitle === undefined) return title;
	try {
		return retitle(title, options);
	} catch {
		// Never the host's raw text for a remote call: one exactly-shown line.
		return showExactlyCut(title, 2000);
	}
}

/** Makes `ui.select` lend the current call's signal; once per UI object, idempotent. */
export function lendCallSignal(ui: PromptUi): void {
	const marked = ui as PromptUi & { [LENT]?: true };
	if (marked[LENT]) return;
	const original = ui.select.bind(ui) as Select;
	ui.select = (title, options, opts) => {
		const call = callContext.getStore();
		// A dialog opened outside a remote call is left as the host made it; one with its own signal keeps it.
		if (call === undefined) return original(title, options, opts);
		const shown = titled(title, options, call.retitle);
		// The queue's signal closes the dialog when its token's queue is denied or revoked; the call's is in it.
		const open = (turn: AbortSignal) =>
			original(shown, options, { ...opts, signal: opts?.signal ? AbortSignal.any([opts.signal, turn]) : turn });
		return processPromptQueue()
			.run(call.token, call.signal, open, call.take)
			.then(answer => (answer !== DENIED ? answer : options.includes("Deny") ? "Deny" : undefined));
	};
	marked[LENT] = true;
}
