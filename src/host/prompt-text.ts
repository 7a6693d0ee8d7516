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
 *   <name>: <value>   for every argument those lines do not show whole, in the tool's schema order
 *   Remote call (A2A): token <name>[, client <client>]
 *
 * In the TUI (the host's stdout is a terminal) every line is cut into rows that fit its dialog, each
 * continuation row marked (src/text/rows.ts), so the TUI's own wrap never starts a row with caller text;
 * over rpc the lines stay whole and the client lays them out (the headless host does so at its own
 * width). A long value keeps its start and end, says how much is not shown, and gives its size and SHA-256. The
 * first line differs from any the host writes (`Allow tool: <tool>` alone), which is how the headless
 * host knows a title is the bridge's (`parseApprovalTitle`, src/headless/frames.ts). Pure.
 */
import { createHash } from "node:crypto";
import type { CallerInfo } from "../core/types.ts";
import { rows } from "../text/rows.ts";
import { cutShown, showExactly, showExactlyCut, showSafely } from "../text/show.ts";

/** Columns of the TUI's dialog frame (border and padding each side) and a margin. */
const DIALOG_FRAME = 8;
/** Narrowest rows cut for a dialog, however narrow the terminal. */
const MIN_ROW_WIDTH = 40;

/** Row width for the host's dialog: its terminal's width less the frame in the TUI; Infinity over rpc. */
export function dialogRowWidth(out: { isTTY?: boolean; columns?: number }): number {
	return out.isTTY && out.columns ? Math.max(MIN_ROW_WIDTH, out.columns - DIALOG_FRAME) : Number.POSITIVE_INFINITY;
}
/** Shown characters of one value: about eight rows. */
const VALUE_MAX = 560;
/** Shown characters of the start of what runs on the first line (the TUI cuts its dialog title further). */
const START_MAX = 160;
/** A text argument longer than this (about three rows) also shows its size and SHA-256. */
const DIGEST_FROM = 200;

export interface PromptCall {
	tool: string;
	args: Record<string, unknown>;
	/** Argument names in the tool's schema order; the caller's own order decides nothing. */
	order: readonly string[];
	/** The tool's own detail lines for these arguments, as the host builds them (null: the tool has none). */
	details: readonly string[] | null;
	caller: Pick<CallerInfo, "tokenName" | "client">;
	/** Columns a row may take (`dialogRowWidth`); Infinity keeps each line whole. */
	width: number;
}

/** The last line: whose remote call this is. Read back by the headless host. */
function promptLabel(caller: Pick<CallerInfo, "tokenName" | "client">): string {
	return `Remote call (A2A): token ${showSafely(caller.tokenName, 80)}${caller.client ? `, client ${showSafely(caller.client, 80)}` : ""}`;
}

/** The host's `formatApprovalDetails` result as the host uses it (`formatApprovalPrompt`): non-empty strings. */
export function hostDetails(raw: unknown): string[] | null {
	if (typeof raw === "string") return raw.length > 0 ? [raw] : [];
	if (Array.isArray(raw)) return raw.filter((d): d is string => typeof d === "string" && d.length > 0);
	return null;
}

const digest = (text: string): string => {
	const bytes = Buffer.byteLength(text, "utf8");
	return `${bytes.toLocaleString("en-US")} bytes, sha256 ${createHash("sha256").update(text).digest("hex")}`;
};

const isLong = (text: string): boolean => text.length > DIGEST_FROM;

const LABEL = /^[A-Za-z][A-Za-z ]{0,30}:[ \n]/;
/** The host's cut (omp `truncateForPrompt`): the first 2,000 characters, then `[…N ch elided…]`. */
const HOST_CUT = /\[…\d+ch elided…\]$/;

/**
 * How the tool's detail lines show `value`: "whole" in a line `Label: <value>` (or `Label:\n<value>`),
 * "cut" by the host's own elision, else null. A cut copy is left out: the argument line shows it better.
 */
function hostCopy(detail: string, value: string): "whole" | "cut" | null {
	const label = LABEL.exec(detail)?.[0];
	if (label === undefined || value === "") return null;
	const rest = detail.slice(label.length);
	if (rest === value) return "whole";
	const elided = HOST_CUT.exec(rest);
	return elided && rest.length > elided[0].length && value.startsWith(rest.slice(0, -elided[0].length)) ? "cut" : null;
}

const NAME = /^[A-Za-z_][\w.-]{0,63}$/;

/** The line of one argument, and its start without size and digest (for the first line of the title). */
interface ArgumentLine {
	line: string;
	start: string;
}

/** One line per argument the tool's detail lines do not show whole; a long one with its size and digest. */
function argumentLines(call: PromptCall, details: readonly string[]): ArgumentLine[] {
	const known = call.order.filter(k => Object.hasOwn(call.args, k));
	const extra = Object.keys(call.args)
		.filter(k => !call.order.includes(k))
		.sort();
	const out: ArgumentLine[] = [];
	for (const key of [...known, ...extra]) {
		const value = call.args[key];
		if (value === undefined) continue;
		const name = NAME.test(key) ? key : showExactlyCut(key, 80);
		if (typeof value === "string") {
			if (details.some(d => hostCopy(d, value) === "whole")) {
				if (isLong(value)) out.push({ line: `${name}: ${digest(value)} (shown above)`, start: "" });
				continue;
			}
			const shown = isLong(value) ? showExactlyCut(value, VALUE_MAX) : showExactly(value);
			const line = isLong(value) ? `${name} (${digest(value)}): ${shown}` : `${name}: ${shown}`;
			out.push({ line, start: `${name}: ${shown}` });
			continue;
		}
		let json: string;
		try {
			json = JSON.stringify(value) ?? String(value);
		} catch {
			json = String(value);
		}
		// JSON already quotes every string in it; what JSON leaves raw (DEL, C1, format characters) is escaped.
		const shown = showSafely(json, VALUE_MAX);
		out.push({
			line: json.length > VALUE_MAX ? `${name} (${digest(json)}): ${shown}` : `${name}: ${shown}`,
			start: `${name}: ${shown}`,
		});
	}
	return out;
}

const startOf = (line: string | undefined): string => (line ? cutShown(line, START_MAX) : "");

const layout = (lines: readonly string[], width: number): string[] => lines.flatMap(l => rows(l, width));

/**
 * The title for the host's approval `select` of a remote call. `hostTitle` is the host's; when it is not
 * what the host builds from these arguments (an extension revised them, or the host changed its format),
 * the host's text is shown instead of the arguments, as one exactly-shown value.
 */
export function approvalTitle(hostTitle: string, call: PromptCall): string {
	const tool = showSafely(call.tool, 120);
	const details = call.details ?? [];
	const suffix = details.join("\n");
	const head =
		suffix === "" ? hostTitle : hostTitle.endsWith(`\n${suffix}`) ? hostTitle.slice(0, -suffix.length - 1) : null;
	const headLines = head?.split("\n") ?? [];
	let body: string[];
	if (head !== null && headLines[0] === `Allow tool: ${call.tool}`) {
		const strings = Object.values(call.args).filter((v): v is string => typeof v === "string");
		const kept = details.filter(d => !strings.some(v => hostCopy(d, v) === "cut"));
		const shownDetails = kept.map(d => showExactlyCut(d, VALUE_MAX));
		const args = argumentLines(call, details);
		body = [...headLines.slice(1).map(l => showSafely(l)), ...shownDetails, ...args.map(a => a.line)];
		const start =
			shownDetails[0] ??
			args
				.map(a => a.start)
				.filter(Boolean)
				.join(", ");
		return [
			`Allow tool: ${tool} — remote call (A2A): ${startOf(start)}`,
			...layout(body, call.width),
			promptLabel(call.caller),
		].join("\n");
	}
	const rest = hostTitle.startsWith("Allow tool: ")
		? hostTitle.slice(hostTitle.indexOf("\n") + 1 || hostTitle.length)
		: hostTitle;
	const shown = showExactlyCut(rest, VALUE_MAX * 2);
	body = [`the host's prompt text, not checked against the call's arguments: ${shown}`];
	const first = `Allow tool: ${tool} — remote call (A2A): ${startOf(shown)}`;
	return [first, ...layout(body, call.width), promptLabel(call.caller)].join("\n");
}

/** Any other dialog a remote call opens: its title as one exactly-shown value, then whose call it is. */
export function dialogTitle(
	hostTitle: string,
	caller: Pick<CallerInfo, "tokenName" | "client">,
	width = Number.POSITIVE_INFINITY,
): string {
	return [
		...layout([`A dialog of a remote call (A2A): ${showExactlyCut(hostTitle, VALUE_MAX)}`], width),
		promptLabel(caller),
	].join("\n");
}
