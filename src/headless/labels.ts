/**
 * Pairs the bridge's "remote call" notifications with the approval prompts that follow them. omp gives
 * no way to put the label into the prompt itself; the notification comes just before its prompt, so
 * the first queued label for the same tool belongs to the next prompt for that tool. Bounded.
 */
import { type ParsedLabel, parseCallerLabel } from "./frames.ts";

/** @internal */
export const MAX_PENDING_LABELS = 64;

export class LabelQueue {
	readonly #pending: ParsedLabel[] = [];

	/** Takes a notification; true when it was a label (then it is kept for its prompt, not printed). */
	offer(message: string): boolean {
		const label = parseCallerLabel(message);
		if (label === null) return false;
		this.#pending.push(label);
		if (this.#pending.length > MAX_PENDING_LABELS) this.#pending.shift();
		return true;
	}

	/** The caller of the next prompt for `tool`, or undefined when the bridge did not label one. */
	take(tool: string): { tokenName: string; client: string | null } | undefined {
		const i = this.#pending.findIndex(l => l.tool === tool);
		if (i < 0) return undefined;
		const [label] = this.#pending.splice(i, 1);
		return label ? { tokenName: label.tokenName, client: label.client } : undefined;
	}
}
