/**
 * The approval decision of the headless host (contract §11, §16). Invariants: every approval prompt gets
 * exactly one answer; silence or closed input means Deny; an answer counts only for a prompt that was on
 * screen before it was typed (a line typed while no prompt shows, the rest of a read that answered the
 * previous prompt and a half-typed line are dropped); caller text is shown with its hidden characters
 * escaped, and laid out in rows the terminal never wraps, so no caller text starts a row (contract §19;
 * the text itself: headless/prompt-screen.ts). Nothing here touches processes, the real clock or stdio.
 */
import type { ApprovalsMode } from "./args.ts";
import type { ApprovalPrompt } from "./frames.ts";
import { type Answer, type Decision, formatPrompt, readAnswer, screenRows } from "./prompt-screen.ts";
import { DENY_QUEUE, readDenyQueue } from "./queue-command.ts";

export interface Clock {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

export interface ApproverOptions {
	mode: ApprovalsMode;
	timeoutMs: number;
	/** Terminal input (ask mode only): chunks of text, ended when the terminal closes. */
	input?: AsyncIterable<string | Uint8Array>;
	output: { write(text: string): void };
	clock?: Clock;
	/** The terminal's width in columns now; Infinity (the default) when output is not a terminal. */
	width?: () => number;
	/** `deny-queue NAME` typed (ask mode): the bridge denies that token's prompts waiting in its queue. */
	denyQueue?: (token: string) => void;
}

interface Pending {
	prompt: ApprovalPrompt;
	resolve(d: Decision): void;
}

const realClock: Clock = {
	setTimeout: (fn, ms) => setTimeout(fn, ms),
	clearTimeout: h => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class Approver {
	readonly #opts: ApproverOptions;
	readonly #clock: Clock;
	readonly #queue: Pending[] = [];
	#current: { pending: Pending; timer: unknown } | undefined;
	#inputClosed = false;
	/** Typed text not yet handled; emptied when a prompt is shown, so the rest of a read that answered the
	 * previous prompt, or a line half typed before, never answers the new one. */
	#typed = "";

	constructor(opts: ApproverOptions) {
		this.#opts = opts;
		this.#clock = opts.clock ?? realClock;
		// Read from the start so lines typed before a prompt are consumed (and dropped) before it shows.
		if (opts.mode === "ask") this.#startReading();
	}

	decide(prompt: ApprovalPrompt): Promise<Decision> {
		if (this.#opts.mode === "approve") return Promise.resolve({ value: "Approve", reason: "--approvals approve" });
		if (this.#opts.mode === "deny") return Promise.resolve({ value: "Deny", reason: "--approvals deny" });
		if (this.#inputClosed) return Promise.resolve({ value: "Deny", reason: "terminal input closed" });
		return new Promise(resolve => {
			this.#queue.push({ prompt, resolve });
			if (!this.#current) this.#showNext();
			// Said at once, so the human knows an answer now may be followed by a prompt not yet read.
			else this.#opts.output.write(`\n${this.#rows(`(${this.#queue.length} more waiting; answer the prompt above: `)}`);
		});
	}

	/** Whether a prompt is on screen (a remote call's prompt asked now waits its turn in the bridge's queue). */
	get showing(): boolean {
		return this.#current !== undefined;
	}

	/** The host withdrew a prompt (its own timeout or an abort): forget it without answering. */
	withdraw(id: string): boolean {
		const i = this.#queue.findIndex(p => p.prompt.id === id);
		if (i >= 0) {
			this.#queue.splice(i, 1);
			return true;
		}
		if (this.#current?.pending.prompt.id !== id) return false;
		this.#clock.clearTimeout(this.#current.timer);
		this.#current = undefined;
		this.#opts.output.write("\n(withdrawn by the host)\n");
		this.#showNext();
		return true;
	}

	/** `text` in the rows this terminal shows now (`screenRows`). */
	#rows(text: string): string {
		return screenRows(text, this.#opts.width?.() ?? Number.POSITIVE_INFINITY).join("\n");
	}

	#showNext(): void {
		const pending = this.#queue.shift();
		if (!pending) return;
		if (this.#inputClosed) {
			pending.resolve({ value: "Deny", reason: "terminal input closed" });
			this.#showNext();
			return;
		}
		const seconds = Math.round(this.#opts.timeoutMs / 1000);
		const timer = this.#clock.setTimeout(
			() => this.#settle("Deny", `no answer within ${seconds} s`, "\n"),
			this.#opts.timeoutMs,
		);
		this.#current = { pending, timer };
		this.#typed = "";
		const width = this.#opts.width?.() ?? Number.POSITIVE_INFINITY;
		this.#opts.output.write(formatPrompt(pending.prompt, this.#opts.timeoutMs, this.#queue.length, width));
	}

	#settle(value: Answer, reason: string, echo = ""): void {
		const cur = this.#current;
		if (!cur) return;
		this.#clock.clearTimeout(cur.timer);
		this.#current = undefined;
		if (echo) this.#opts.output.write(echo);
		cur.pending.resolve({ value, reason });
		this.#showNext();
	}

	#onLine(line: string): void {
		const token = readDenyQueue(line);
		if (token !== undefined) this.#denyQueue(token);
		if (token !== undefined || !this.#current) return;
		const answer = readAnswer(line);
		if (answer) this.#settle(answer, "answered on the terminal");
		else this.#opts.output.write("Type y to approve or n to deny: ");
	}

	/** A denial, so it counts whenever typed: the bridge's queue first, then this terminal's own prompts. */
	#denyQueue(token: string): unknown {
		const reason = `${DENY_QUEUE} ${token} on the terminal`;
		if (token !== "" && this.#opts.denyQueue) this.#opts.denyQueue(token);
		else return this.#opts.output.write(`\n(type "${DENY_QUEUE} NAME")\n`);
		const mine = this.#queue.filter(q => q.prompt.caller?.tokenName === token);
		for (const p of mine) p.resolve({ value: "Deny", reason });
		this.#queue.splice(0, this.#queue.length, ...this.#queue.filter(q => !mine.includes(q)));
		if (this.#current?.pending.prompt.caller?.tokenName === token) this.#settle("Deny", reason, "\n");
	}

	/** One read: its lines in order; an answer that shows the next prompt empties `#typed` (rest dropped). */
	#onChunk(text: string): void {
		this.#typed += text;
		for (let nl = this.#typed.indexOf("\n"); nl >= 0; nl = this.#typed.indexOf("\n")) {
			const line = this.#typed.slice(0, nl).replace(/\r$/, "");
			this.#typed = this.#typed.slice(nl + 1);
			this.#onLine(line);
		}
	}

	#onClosed(): void {
		this.#inputClosed = true;
		if (this.#current) this.#settle("Deny", "terminal input closed", "\n");
	}

	#startReading(): void {
		const input = this.#opts.input;
		if (!input) {
			this.#inputClosed = true;
			return;
		}
		(async () => {
			const decoder = new TextDecoder();
			for await (const chunk of input)
				this.#onChunk(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
		})()
			.catch(() => {})
			.finally(() => this.#onClosed());
	}
}
