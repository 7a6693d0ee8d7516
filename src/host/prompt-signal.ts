/**
 * Approval prompts of a cancelled remote call close (contract §13, issue 14). The host's tool wrapper
 * asks `select` with no signal (host fact 6), so the bridge runs each call in an async context holding
 * the call's signal and lends that signal to any `select` opened inside it: the host then closes the
 * dialog itself (the TUI removes it; rpc sends `cancel` with the dialog's id). The same context can
 * carry a last line for the dialog's title saying whose remote call it is (contract §14): omp has no
 * supported way to label its prompt, and this wrapper is already the one place that sees it.
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Select = (title: string, options: unknown[], opts?: { signal?: AbortSignal } & Record<string, unknown>) => unknown;
export interface PromptUi {
	select: Select;
}

const callContext = new AsyncLocalStorage<{ signal: AbortSignal; label?: string }>();
const LENT = Symbol.for("pi-a2a-ext.select-lends-call-signal");

/** Runs `fn` (a tool's execute) so that prompts it opens close when `signal` aborts and end with `label`. */
export function withCallSignal<T>(signal: AbortSignal, fn: () => T, label?: string): T {
	return callContext.run(label === undefined ? { signal } : { signal, label }, fn);
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
		const shown = call.label === undefined ? title : `${title}\n${call.label}`;
		if (opts?.signal !== undefined) return original(shown, options, opts);
		return original(shown, options, { ...opts, signal: call.signal });
	};
	marked[LENT] = true;
}
