/**
 * The approval decision of the headless host (contract §11, §16). Invariants: every approval prompt gets
 * exactly one answer; silence or closed input means Deny; an answer counts only for a prompt that was on
 * screen before it was typed (a line typed while no prompt shows, the rest of a read that answered the
 * previous prompt and a half-typed line are dropped); caller text is shown with its hidden characters
 * escaped, and laid out in rows the terminal never wraps, so no caller text starts a row (contract §19).
 * Nothing here touches processes, the real clock or stdio.
 */
import { fitWidth, rows, rowWidth, textWidth } from "../text/rows.ts";
import { showLinesSafely, showSafely, withoutCutEscape } from "../text/show.ts";
import type { ApprovalsMode } from "./args.ts";
import type { ApprovalPrompt } from "./frames.ts";
import { DENY_QUEUE, readDenyQueue } from "./queue-command.ts";

export type Answer = "Approve" | "Deny";
export interface Decision {
	value: Answer;
	reason: string;
}

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

/** Detail lines shown at most; the bridge shows about one per argument (the Approve? line names the start still). */
const MAX_DETAIL_LINES = 40;
/** A title the host built alone is cut at 2,000 characters; escapes may lengthen it. */
const MAX_DETAIL_CHARS = 4000;
const MAX_DECISION_DETAIL = 160;
/** ` from token ci, client claude-code` when the bridge labelled the prompt, else "". */
function callerText(prompt: ApprovalPrompt): string {
	const c = prompt.caller;
	if (!c) return "";
	return ` from token ${showSafely(c.tokenName, 80)}${c.client ? `, client ${showSafely(c.client, 80)}` : ""}`;
}

/** What the host's prompts meet under each --approvals mode (the banner's last picture line). */
export function describeAnswerer(mode: ApprovalsMode, timeoutMs: number): string {
	if (mode === "deny")
		return "prompts: answered Deny at once (--approvals deny): a remote call that prompts is refused";
	if (mode === "approve")
		return "prompts: answered Approve at once (--approvals approve): every prompting remote call runs";
	// omp's Collab lives in its interactive mode; this host runs omp in rpc mode, so no guest is ever asked.
	return `prompts: asked on this terminal and nowhere else (--approvals ask; omp in rpc mode shares no prompt with Collab, and nothing the MCP caller sends answers one); Deny after ${Math.round(timeoutMs / 1000)} s without an answer`;
}

/** The prompt on a terminal too narrow for any row (`rowWidth`): fixed text, nothing the caller chose. */
const TOO_NARROW = "\nApproval needed: a remote call, but this terminal is too narrow to show it. Deny? [y/N] ";

/**
 * The prompt: a header naming the tool and the caller, the detail rows, and the line that asks, which
 * names the tool and the start of what runs. On a terminal every line is laid out in rows no wider
 * than `rowWidth` allows for `width` columns (the rule the TUI dialog and its guests follow too), the
 * answer on a row of its own; otherwise (`width` Infinity) each line stays whole.
 * @internal
 */
export function formatPrompt(prompt: ApprovalPrompt, timeoutMs: number, waiting: number, width = Infinity): string {
	const w = Number.isFinite(width) ? rowWidth(width, 0) : Number.POSITIVE_INFINITY;
	if (w === null) return TOO_NARROW;
	const details = prompt.details.slice(0, MAX_DETAIL_LINES).map(d => showSafely(d, MAX_DETAIL_CHARS));
	if (prompt.details.length > MAX_DETAIL_LINES)
		details.push(`… ${prompt.details.length - MAX_DETAIL_LINES} more lines`);
	const queue = waiting > 0 ? ` (${waiting} more waiting)` : "";
	const tool = showSafely(prompt.tool, 200);
	const answer = `[y/N] Deny in ${Math.round(timeoutMs / 1000)} s: `;
	const ask = Number.isFinite(w)
		? [...rows(`Approve? ${tool}${startIn(prompt.start, w - textWidth(`Approve? ${tool} ()`))}`, w), ...rows(answer, w)]
		: [`Approve? ${tool}${startIn(prompt.start, 120)} ${answer}`];
	return [
		"",
		...rows(`Approval needed${queue}: ${tool}${callerText(prompt)}`, w),
		...details.flatMap(d => rows(d, w, "  ")),
		...ask,
	].join("\n");
}

/** ` (<start of what runs>)` cut to `columns` columns, or "" when there is no start or no room. */
function startIn(start: string, columns: number): string {
	if (!start || columns < 2) return "";
	const shown = showSafely(start);
	const fitted = fitWidth(shown, columns);
	return ` (${fitted === shown ? shown : `${withoutCutEscape(fitted.slice(0, -1))}…`})`;
}

/** A line printed on a terminal too narrow for any row (`rowWidth`): fixed text, nothing the caller chose. @internal */
export const LINE_TOO_NARROW = "(a2a host: a line not shown, this terminal is too narrow)";

/**
 * A line `npm run host` prints that may hold caller text, as the rows a terminal `columns` wide shows: by the
 * rule the prompt follows (`rowWidth`: at most ROW_MAX, continuation rows marked), so no screen of at least
 * ROW_MAX + 4 columns re-wraps one; Infinity (not a terminal) keeps each line whole.
 */
export function screenRows(text: string, columns: number): string[] {
	const w = Number.isFinite(columns) ? rowWidth(columns, 0) : Number.POSITIVE_INFINITY;
	return w === null ? [LINE_TOO_NARROW] : rows(text, w);
}

/** A host notification as `npm run host` prints it: its line breaks kept, every line shown safely. */
export const noticeLine = (message: string, level: string): string =>
	level === "info"
		? `host: ${showLinesSafely(message)}`
		: `host [${showSafely(level, 20)}]: ${showLinesSafely(message)}`;

/** A dialog nobody can fill in headless, cancelled: its title's first line. */
export const cancelledLine = (method: string, title: string): string =>
	`host asked (${showSafely(method, 20)}) "${showSafely(title.split("\n")[0] ?? "", 200)}" -> cancelled: nobody can answer that headless`;

/** Said when a remote call's prompt is announced while another is on screen; the answer is still typed after it. */
export const waitingLine = (tool: string, tokenName: string): string =>
	`(a prompt waits for its turn: ${showSafely(tool, 120)} from token ${showSafely(tokenName, 80)}; answer the prompt above: `;

/** The one line printed for every decision, whatever the mode. */
export function describeDecision(prompt: ApprovalPrompt, decision: Decision): string {
	const more = prompt.details.length > 1 ? ` +${prompt.details.length - 1} more lines` : "";
	const what = prompt.start ? ` (${showSafely(prompt.start, MAX_DECISION_DETAIL)}${more})` : "";
	const tool = showSafely(prompt.tool, 200);
	return `approval: ${tool}${what}${callerText(prompt)} -> ${decision.value} (${decision.reason})`;
}

/** y/yes/a/approve -> Approve; n/no/d/deny/empty -> Deny; anything else -> ask again. @internal */
export function readAnswer(line: string): Answer | undefined {
	const t = line.trim().toLowerCase();
	if (["y", "yes", "a", "approve"].includes(t)) return "Approve";
	if (["", "n", "no", "d", "deny"].includes(t)) return "Deny";
	return undefined;
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
