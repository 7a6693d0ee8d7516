/**
 * Approval prompts of a cancelled remote call close (contract §13, issue 14). The host's tool wrapper
 * asks `select` with no signal (host fact 6), so the bridge runs each call in an async context holding
 * the call's signal and lends that signal to any `select` opened inside it: the host then closes the
 * dialog itself (the TUI removes it; rpc sends `cancel` with the dialog's id).
 */
import { AsyncLocalStorage } from "node:async_hooks";

type Select = (title: string, options: unknown[], opts?: { signal?: AbortSignal } & Record<string, unknown>) => unknown;
export interface PromptUi {
	select: Select;
}

const callSignal = new AsyncLocalStorage<AbortSignal>();
const LENT = Symbol.for("pi-a2a-ext.select-lends-call-signal");

/** Runs `fn` (a tool's execute) so that prompts it opens close when `signal` aborts. */
export function withCallSignal<T>(signal: AbortSignal, fn: () => T): T {
	return callSignal.run(signal, fn);
}

/** Makes `ui.select` lend the current call's signal; once per UI object, idempotent. */
export function lendCallSignal(ui: PromptUi): void {
	const marked = ui as PromptUi & { [LENT]?: true };
	if (marked[LENT]) return;
	const original = ui.select.bind(ui) as Select;
	ui.select = (title, options, opts) => {
		const signal = callSignal.getStore();
		// A dialog with its own signal, or one opened outside a remote call, is left as the host made it.
		if (signal === undefined || opts?.signal !== undefined) return original(title, options, opts);
		return original(title, options, { ...opts, signal });
	};
	marked[LENT] = true;
}
