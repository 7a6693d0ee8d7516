/**
 * What the headless host's terminal shows of an approval prompt and reads back (contract §11, §19): the
 * prompt laid out in rows the terminal never wraps, caller text escaped, the one decision line, the banner's
 * answerer line, and the typed answer read. Pure text; the Approver (headless/cli.ts) decides when.
 */
import { fitWidth, rows, rowWidth, textWidth } from "../text/rows.ts";
import { showLinesSafely, showSafely, withoutCutEscape } from "../text/show.ts";
import type { ApprovalsMode } from "./args.ts";
import type { ApprovalPrompt } from "./frames.ts";

export type Answer = "Approve" | "Deny";
export interface Decision {
	value: Answer;
	reason: string;
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

/** y/yes/a/approve -> Approve; n/no/d/deny/empty -> Deny; anything else -> ask again. */
export function readAnswer(line: string): Answer | undefined {
	const t = line.trim().toLowerCase();
	if (["y", "yes", "a", "approve"].includes(t)) return "Approve";
	if (["", "n", "no", "d", "deny"].includes(t)) return "Deny";
	return undefined;
}
