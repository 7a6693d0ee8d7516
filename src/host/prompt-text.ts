/**
 * The approval prompt of a remote call, as the bridge hands it to the host's UI (contract §19). The host
 * joins `Allow tool: <name>`, its reason and the tool's own detail lines with line breaks, so a line break
 * inside a caller's command reads as one of the prompt's own, and it shows only what each tool chose to
 * show (`bash`: the command but not `env` or `cwd`; `hub`: nothing; `edit`: the path). The bridge rebuilds
 * the title from what it knows the call will run with:
 *
 *   Allow tool: <tool> — remote call (A2A): <start of what runs>
 *   <the host's reason lines>
 *   <the tool's detail lines, each one line, caller text shown exactly>
 *   <name>: <value>   for every argument those lines do not show whole (src/host/prompt-args.ts)
 *   Remote call (A2A): token <name>[, client <client>]
 *
 * In the TUI (the host's stdout is a terminal) every line after the first (the dialog's border title,
 * which the TUI cuts) is cut into marked rows (src/text/rows.ts) no wider than `rowWidth` allows, so
 * neither the TUI nor a Collab guest re-wraps one; over rpc the lines stay whole and the client lays
 * them out (the headless host with the same rule). A long value keeps its start and end. The
 * first line differs from any the host writes (`Allow tool: <tool>` alone), which is how the headless
 * host knows a title is the bridge's (`parseApprovalTitle`, src/headless/frames.ts). Pure.
 */
import type { CallerInfo } from "../core/types.ts";
import { rows, rowWidth } from "../text/rows.ts";
import { cutShown, showExactlyCut, showSafely } from "../text/show.ts";
import { argumentLines, hostCopy, VALUE_MAX } from "./prompt-args.ts";

/** Columns of omp's dialog frame: a border and a space each side (its body holds columns − 4). */
const DIALOG_FRAME = 4;

/**
 * Row width for the host's dialog (`rowWidth`: at most ROW_MAX, so a Collab guest of any size down to
 * ROW_MAX + 4 columns holds it too); null when the terminal is too narrow; Infinity over rpc.
 */
export function dialogRowWidth(out: { isTTY?: boolean; columns?: number }): number | null {
	return out.isTTY && out.columns ? rowWidth(out.columns, DIALOG_FRAME) : Number.POSITIVE_INFINITY;
}
/** Shown characters of the start of what runs on the first line (the TUI cuts its dialog title further). */
const START_MAX = 160;

export interface PromptCall {
	tool: string;
	args: Record<string, unknown>;
	/** Argument names in the tool's schema order; the caller's own order decides nothing. */
	order: readonly string[];
	/** The tool's own detail lines for these arguments, as the host builds them (null: the tool has none). */
	details: readonly string[] | null;
	caller: Pick<CallerInfo, "tokenName" | "client">;
	/** Columns a row may take (`dialogRowWidth`); Infinity keeps each line whole; null: too narrow a screen. */
	width: number | null;
	/** Another extension may revise the arguments before the gate asks: only the host's own text is shown. */
	revisable?: boolean;
}

/** The last line: whose remote call this is. Read back by the headless host. */
function promptLabel(caller: Pick<CallerInfo, "tokenName" | "client">): string {
	return `Remote call (A2A): token ${showSafely(caller.tokenName, 80)}${caller.client ? `, client ${showSafely(caller.client, 80)}` : ""}`;
}

/** The prompt on a screen too narrow for any row: fixed text, nothing the caller chose. */
const TOO_NARROW = [
	"Allow tool: remote call (A2A) — screen too narrow",
	"A remote call (A2A) asks for approval, but this screen is too narrow to show what it runs. Deny it, widen the screen and have the call sent again.",
].join("\n");

/** The host's `formatApprovalDetails` result as the host uses it (`formatApprovalPrompt`): non-empty strings. */
export function hostDetails(raw: unknown): string[] | null {
	if (typeof raw === "string") return raw.length > 0 ? [raw] : [];
	if (Array.isArray(raw)) return raw.filter((d): d is string => typeof d === "string" && d.length > 0);
	return null;
}

const startOf = (line: string | undefined): string => (line ? cutShown(line, START_MAX) : "");

const layout = (lines: readonly string[], width: number): string[] => lines.flatMap(l => rows(l, width));

/** The tool a host title asks about (`Allow tool: <name>`), when its first line names one plainly. */
const ASKED = /^Allow tool: ([\w.:-]{1,64})$/;

/** A title whose every line (the label with the caller's names included) is laid out in marked rows. */
function titled(first: string, body: readonly string[], call: Pick<PromptCall, "caller" | "width">): string {
	if (call.width === null) return TOO_NARROW;
	return [first, ...layout([...body, promptLabel(call.caller)], call.width)].join("\n");
}

/**
 * The title for the host's approval `select` of a remote call. `hostTitle` is the host's; when it is not
 * what the host builds from these arguments (an extension revised them, the host changed its format, or
 * a subagent of the call asks about its own tool), the host's text is shown instead, as one exactly-shown
 * value, under a first line naming the tool the host asks about.
 */
export function approvalTitle(hostTitle: string, call: PromptCall): string {
	const tool = showSafely(call.tool, 120);
	const details = call.details ?? [];
	const suffix = details.join("\n");
	const head = call.revisable
		? null
		: suffix === ""
			? hostTitle
			: hostTitle.endsWith(`\n${suffix}`)
				? hostTitle.slice(0, -suffix.length - 1)
				: null;
	const headLines = head?.split("\n") ?? [];
	if (head !== null && headLines[0] === `Allow tool: ${call.tool}`) {
		const strings = Object.values(call.args).filter((v): v is string => typeof v === "string");
		const kept = details.filter(d => !strings.some(v => hostCopy(d, v) === "cut"));
		const shownDetails = kept.map(d => showExactlyCut(d, VALUE_MAX));
		const args = argumentLines(call.args, call.order, details);
		const body = [...headLines.slice(1).map(l => showSafely(l)), ...shownDetails, ...args.map(a => a.line)];
		const start =
			shownDetails[0] ??
			args
				.map(a => a.start)
				.filter(Boolean)
				.join(", ");
		return titled(`Allow tool: ${tool} — remote call (A2A): ${startOf(start)}`, body, call);
	}
	const firstLine = hostTitle.split("\n", 1)[0] ?? "";
	const rest = hostTitle.startsWith("Allow tool: ")
		? hostTitle.slice(hostTitle.indexOf("\n") + 1 || hostTitle.length)
		: hostTitle;
	const shown = showExactlyCut(rest, VALUE_MAX * 2);
	const asked = ASKED.exec(firstLine)?.[1];
	const inner = asked !== undefined && asked !== call.tool;
	const what = inner
		? `${asked} inside the remote ${tool} call (a subagent's tool), as the host shows it`
		: "the host's prompt text, not checked against the call's arguments";
	return titled(
		`Allow tool: ${inner ? asked : tool} — remote call (A2A): ${startOf(shown)}`,
		[`${what}: ${shown}`],
		call,
	);
}

/** Any other dialog a remote call opens: its title as one exactly-shown value, then whose call it is. */
export function dialogTitle(
	hostTitle: string,
	caller: Pick<CallerInfo, "tokenName" | "client">,
	width: number | null = Number.POSITIVE_INFINITY,
): string {
	if (width === null) return TOO_NARROW;
	return layout(
		[`A dialog of a remote call (A2A): ${showExactlyCut(hostTitle, VALUE_MAX)}`, promptLabel(caller)],
		width,
	).join("\n");
}
