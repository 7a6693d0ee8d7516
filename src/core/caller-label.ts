/**
 * The line that says a host approval prompt belongs to a remote call (contract §14). The host gives an
 * extension no way to put text into its prompt, so the bridge notifies this line just before the prompt
 * opens (TUI toast; an rpc `notify` frame right before the `select`), and the headless host pairs it with
 * the prompt. One format, written and read here.
 */
import type { CallerInfo } from "./types.ts";

const PREFIX = "A2A remote call: ";
const SUFFIX = " awaits approval";

export function callerLabel(tool: string, caller: Pick<CallerInfo, "token" | "client">): string {
	const client = caller.client ? `, client ${caller.client}` : "";
	return `${PREFIX}${tool} — token ${caller.token}${client}${SUFFIX}`;
}

export interface ParsedLabel {
	tool: string;
	token: string;
	client: string | null;
}

/** The label's parts, or null when `message` is not one. Token names hold no spaces; tool names neither. */
export function parseCallerLabel(message: string): ParsedLabel | null {
	if (!message.startsWith(PREFIX) || !message.endsWith(SUFFIX)) return null;
	const m = /^(\S+) — token (\S+)(?:, client (.+))?$/.exec(message.slice(PREFIX.length, -SUFFIX.length));
	return m?.[1] && m[2] ? { tool: m[1], token: m[2], client: m[3] ?? null } : null;
}
