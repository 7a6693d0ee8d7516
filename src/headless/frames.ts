/**
 * The rpc frames of the headless host (host facts §4, §10): stdout carries JSON lines, answers go back
 * as JSON lines on stdin. Pure readers and writers; `scripts/host.ts` owns the pipes.
 */
import { CONTINUED } from "../text/rows.ts";
import { showExactlyCut } from "../text/show.ts";

export interface ApprovalPrompt {
	id: string;
	tool: string;
	/** The start of what runs, one line (e.g. `Command: make`); "" when the prompt shows nothing of it. */
	start: string;
	/** Rows under the title, e.g. `Command: make`, `cwd: "/srv"`; no row holds a caller's line break. */
	details: string[];
	/** Whose remote call this is, when the bridge labelled it (token name, client name). */
	caller?: { tokenName: string; client: string | null };
}

export type HostFrame =
	| { kind: "ready" }
	| { kind: "notify"; message: string; level: string }
	| { kind: "approval"; prompt: ApprovalPrompt }
	/** Any other dialog: nobody can fill it in headless, so it is cancelled, never left waiting. */
	| { kind: "dialog"; id: string; method: string; title: string }
	| { kind: "cancel"; targetId: string }
	| { kind: "extension_error"; message: string }
	| { kind: "other"; type: string }
	| { kind: "not_json"; line: string };

const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

const PROMPT_LABEL = /^Remote call \(A2A\): token (\S+)(?:, client (.+))?$/;
/** The first line of a title the bridge built (src/host/prompt-text.ts); the host's own is `Allow tool: <name>`. */
const BRIDGE_TITLE = /^Allow tool: (\S+) — remote call \(A2A\): (.*)$/;
/** Longest text shown for a title the host built alone. */
const HOST_TEXT_MAX = 2000;

/**
 * An approval title -> tool, start of what runs, detail rows and caller. A title the bridge built
 * (`Allow tool: <tool> — remote call (A2A): <start>` … `Remote call (A2A): token <name>[, client <c>]`)
 * has every caller line break escaped, so its rows are taken as they are. In a title the host built alone
 * (`Allow tool: bash\nCommand: make`, omp `formatApprovalPrompt`) a caller's line break cannot be told
 * from the host's, so everything after the first line is shown as one exactly-shown text (contract §19).
 * @internal
 */
export function parseApprovalTitle(title: string): Omit<ApprovalPrompt, "id"> {
	const lines = title.split("\n");
	const bridge = BRIDGE_TITLE.exec(lines[0] ?? "");
	if (bridge?.[1]) {
		// The label is the last line, maybe cut into rows like the others.
		const joined = joinRows(lines.slice(1));
		const label = PROMPT_LABEL.exec(joined.at(-1) ?? "");
		const caller = label?.[1] ? { caller: { tokenName: label[1], client: label[2] ?? null } } : {};
		return { tool: bridge[1], start: bridge[2] ?? "", details: label ? joined.slice(0, -1) : joined, ...caller };
	}
	const m = /^Allow tool: (.+)$/.exec(lines[0] ?? "");
	const rest = (m ? lines.slice(1) : lines).join("\n");
	const shown = rest === "" ? "" : showExactlyCut(rest, HOST_TEXT_MAX);
	return { tool: m?.[1] ?? "(unnamed tool)", start: shown, details: shown ? [shown] : [] };
}

/** The bridge's rows joined back into its lines (it cuts them for the TUI; the headless host lays them out itself). */
function joinRows(rows: string[]): string[] {
	const lines: string[] = [];
	for (const row of rows) {
		if (row.startsWith(CONTINUED) && lines.length > 0) lines[lines.length - 1] += row.slice(CONTINUED.length);
		else lines.push(row);
	}
	return lines;
}

export function readFrame(line: string): HostFrame {
	let f: Record<string, unknown>;
	try {
		const parsed: unknown = JSON.parse(line);
		if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { kind: "not_json", line };
		f = parsed as Record<string, unknown>;
	} catch {
		return { kind: "not_json", line };
	}
	const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v));
	if (f.type === "ready") return { kind: "ready" };
	if (f.type === "extension_error")
		return { kind: "extension_error", message: `${str(f.extensionPath)}: ${str(f.error)}` };
	if (f.type !== "extension_ui_request") return { kind: "other", type: str(f.type) };
	const id = str(f.id);
	const method = str(f.method);
	if (method === "notify") return { kind: "notify", message: str(f.message), level: str(f.notifyType) || "info" };
	if (method === "cancel") return { kind: "cancel", targetId: str(f.targetId) };
	if (!DIALOG_METHODS.has(method)) return { kind: "other", type: `extension_ui_request/${method}` };
	const options = Array.isArray(f.options) ? f.options : [];
	if (method === "select" && options.includes("Approve") && options.includes("Deny")) {
		return { kind: "approval", prompt: { id, ...parseApprovalTitle(str(f.title)) } };
	}
	return { kind: "dialog", id, method, title: str(f.title) };
}

export const answerFrame = (id: string, value: string): string =>
	`${JSON.stringify({ type: "extension_ui_response", id, value })}\n`;
export const cancelFrame = (id: string): string =>
	`${JSON.stringify({ type: "extension_ui_response", id, cancelled: true })}\n`;
export const promptFrame = (id: string, message: string): string =>
	`${JSON.stringify({ type: "prompt", id, message })}\n`;

/** Whose remote call an approval prompt belongs to, as the bridge announces it just before the prompt. */
export interface ParsedLabel {
	tool: string;
	tokenName: string;
	client: string | null;
}

const LABEL = /^A2A remote call: (\S+) — token (\S+)(?:, client (.+))? awaits approval$/;

/**
 * The bridge's `A2A remote call: <tool> — token <name>[, client <client>] awaits approval`, or null; in the
 * marked rows the bridge cuts it into for a TUI too (src/host/remote-calls.ts), joined back first.
 */
export function parseCallerLabel(message: string): ParsedLabel | null {
	const lines = joinRows(message.split("\n"));
	const m = lines.length === 1 ? LABEL.exec(lines[0] ?? "") : null;
	return m?.[1] && m[2] ? { tool: m[1], tokenName: m[2], client: m[3] ?? null } : null;
}

/** The approval picture in the bridge's start notice (`A2A bridge approval picture …` then one line each). */
export function parseApprovalPicture(message: string): string[] | null {
	const lines = message.split("\n");
	const at = lines.findIndex(l => l.startsWith("A2A bridge approval picture"));
	return at >= 0 ? lines.slice(at + 1) : null;
}

/** The first line of the bridge's start notice (`src/host/commands.ts`), or null; `note` is what follows it. */
export function parseAnnouncement(message: string): { url: string; tokenPrefix: string; note?: string } | null {
	const m = /^A2A bridge listening on (http:\/\/\S+) \(token (\S+)\)(?:; (.+))?$/.exec(message.split("\n")[0] ?? "");
	return m?.[1] && m[2] ? { url: m[1], tokenPrefix: m[2], ...(m[3] ? { note: m[3] } : {}) } : null;
}

export const isBridgeFailure = (message: string): boolean => message.startsWith("A2A bridge not started:");

/** The `/a2a mcp-json` answer: a JSON object with `mcpServers`, maybe followed by a `Note: …` line. */
export function isMcpEntry(message: string): boolean {
	try {
		const v: unknown = JSON.parse(message.replace(/\nNote: [^\n]*$/, ""));
		return typeof v === "object" && v !== null && "mcpServers" in v;
	} catch {
		return false;
	}
}

/** omp exits 1 with this text when no model is configured (main.ts, rpc without a session model). */
export const isNoModelFailure = (stderr: string): boolean => /No models? available/.test(stderr);

/** What the printed `mcpServers` entry holds instead of the token (contract §15). */
export const TOKEN_PLACEHOLDER = "<TOKEN>";

/**
 * The entry with every Bearer credential replaced by TOKEN_PLACEHOLDER: `npm run host` output ends
 * up in CI logs and journals, and the token is full authority over the host.
 */
export function withTokenPlaceholder(entry: string): string {
	return entry.replace(/(Bearer\s+)[^"\s\\]+/gi, `$1${TOKEN_PLACEHOLDER}`);
}
