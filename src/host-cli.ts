/**
 * Pure parts of the headless host (contract §11): arguments, the rpc frames it reads and writes, and the
 * approval decision. `scripts/host.ts` owns the processes; nothing here touches them, the clock or stdio.
 * Invariants: every approval prompt gets exactly one answer; silence or closed input means Deny; a line
 * typed while no prompt is on screen is dropped, so type-ahead can never approve a later prompt.
 */

export type ApprovalsMode = "ask" | "deny" | "approve";
const APPROVALS_MODES: readonly ApprovalsMode[] = ["ask", "deny", "approve"];
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60_000;
const MAX_APPROVAL_TIMEOUT_S = 24 * 60 * 60;

export interface HostArgs {
	approvals: ApprovalsMode;
	/** Why this mode: the flag, or the terminal check that chose the default. */
	approvalsSource: string;
	approvalTimeoutMs: number;
	cwd: string | undefined;
	/** Everything after a literal `--`, passed to omp unchanged. */
	ompArgs: string[];
	help: boolean;
}

export type ArgsResult =
	| { ok: true; value: HostArgs }
	| { ok: false; code: "unknown_option" | "missing_value" | "bad_value"; message: string };

export const USAGE = `usage: npm run host -- [options] [-- <omp options>]
       bun scripts/host.ts -- [options] [-- <omp options>]   (Bun drops a '--' right after the script)

Starts the pinned omp in rpc mode in the current directory with this checkout's A2A bridge,
prints the URL, the token prefix and an mcpServers entry, and serves until Ctrl-C.

options:
  --approvals ask|deny|approve   answer the host's approval prompts: ask on this terminal (default
                                 when stdin is a terminal), deny at once (default otherwise), approve
  --approval-timeout <seconds>   in ask mode, Deny when nobody answers within this time (default 60)
  --cwd <dir>                    serve this directory instead of the current one
  -h, --help                     this text`;

/** Reads `--flag value` and `--flag=value`; returns the value and how many argv slots it used. */
function flagValue(argv: string[], i: number, flag: string): { value: string | undefined; used: number } {
	const arg = argv[i] ?? "";
	if (arg.startsWith(`${flag}=`)) return { value: arg.slice(flag.length + 1), used: 1 };
	const next = argv[i + 1];
	return next === undefined || next.startsWith("--") ? { value: undefined, used: 1 } : { value: next, used: 2 };
}

export function parseHostArgs(argv: string[], isStdinTTY: boolean): ArgsResult {
	const out: HostArgs = {
		approvals: isStdinTTY ? "ask" : "deny",
		approvalsSource: isStdinTTY ? "default: stdin is a terminal" : "default: stdin is not a terminal",
		approvalTimeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
		cwd: undefined,
		ompArgs: [],
		help: false,
	};
	for (let i = 0; i < argv.length; ) {
		const arg = argv[i] ?? "";
		const name = arg.split("=", 1)[0] ?? arg;
		if (arg === "--") {
			out.ompArgs = argv.slice(i + 1);
			break;
		}
		if (arg === "-h" || arg === "--help") {
			out.help = true;
			i++;
			continue;
		}
		if (name !== "--approvals" && name !== "--approval-timeout" && name !== "--cwd") {
			return { ok: false, code: "unknown_option", message: `unknown option '${arg}' (omp options go after '--')` };
		}
		const { value, used } = flagValue(argv, i, name);
		i += used;
		if (value === undefined || value === "") {
			const what = name === "--approvals" ? "ask, deny or approve" : name === "--cwd" ? "a directory" : "seconds";
			return { ok: false, code: "missing_value", message: `${name} needs a value: ${what}` };
		}
		if (name === "--approvals") {
			if (!APPROVALS_MODES.includes(value as ApprovalsMode)) {
				return { ok: false, code: "bad_value", message: `--approvals: '${value}' is not one of ask, deny, approve` };
			}
			out.approvals = value as ApprovalsMode;
			out.approvalsSource = `--approvals ${value}`;
		} else if (name === "--approval-timeout") {
			const seconds = Number(value);
			if (!/^\d+(\.\d+)?$/.test(value) || seconds <= 0 || seconds > MAX_APPROVAL_TIMEOUT_S) {
				const range = `a number of seconds in (0, ${MAX_APPROVAL_TIMEOUT_S}]`;
				return { ok: false, code: "bad_value", message: `--approval-timeout: '${value}' is not ${range}` };
			}
			out.approvalTimeoutMs = Math.round(seconds * 1000);
		} else {
			out.cwd = value;
		}
	}
	return { ok: true, value: out };
}

// ---------------------------------------------------------------------------------------------------
// rpc frames (host facts §4, §10): stdout carries JSON lines; answers go back as JSON lines on stdin.

export interface ApprovalPrompt {
	id: string;
	tool: string;
	/** Lines under the title, e.g. `Command: make` or `Path: /tmp/x`. */
	details: string[];
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

/** `Allow tool: bash\nCommand: make` (omp `formatApprovalPrompt`) -> tool and detail lines. */
export function parseApprovalTitle(title: string): { tool: string; details: string[] } {
	const [first = "", ...rest] = title.split("\n");
	const m = /^Allow tool: (.+)$/.exec(first);
	return m?.[1] ? { tool: m[1], details: rest } : { tool: "(unnamed tool)", details: [first, ...rest] };
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

/** The bridge's start announcement (`src/commands.ts`), or null. */
export function parseAnnouncement(message: string): { url: string; tokenPrefix: string } | null {
	const m = /^A2A bridge listening on (http:\/\/\S+) \(token (\S+)\)$/.exec(message);
	return m?.[1] && m[2] ? { url: m[1], tokenPrefix: m[2] } : null;
}

export const isBridgeFailure = (message: string): boolean => message.startsWith("A2A bridge not started:");

/** The `/a2a mcp-json` answer: a JSON object with `mcpServers`. */
export function isMcpEntry(message: string): boolean {
	try {
		const v: unknown = JSON.parse(message);
		return typeof v === "object" && v !== null && "mcpServers" in v;
	} catch {
		return false;
	}
}

/** omp exits 1 with this text when no model is configured (main.ts, rpc without a session model). */
export const isNoModelFailure = (stderr: string): boolean => /No models? available/.test(stderr);

// ---------------------------------------------------------------------------------------------------
// Approval decisions.

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
}

const MAX_DETAIL_LINES = 12;
const MAX_DETAIL_CHARS = 200;

export function formatPrompt(prompt: ApprovalPrompt, timeoutMs: number, waiting: number): string {
	const shown = prompt.details.slice(0, MAX_DETAIL_LINES).map(d => {
		const line = d.length > MAX_DETAIL_CHARS ? `${d.slice(0, MAX_DETAIL_CHARS)}…` : d;
		return `  ${line}`;
	});
	if (prompt.details.length > MAX_DETAIL_LINES)
		shown.push(`  … ${prompt.details.length - MAX_DETAIL_LINES} more lines`);
	const queue = waiting > 0 ? ` (${waiting} more waiting)` : "";
	return [
		`\nApproval needed${queue}: ${prompt.tool}`,
		...shown,
		`Approve? [y]es / [N]o — Deny in ${Math.round(timeoutMs / 1000)} s: `,
	].join("\n");
}

/** The one line printed for every decision, whatever the mode. */
export function describeDecision(prompt: ApprovalPrompt, decision: Decision): string {
	const what = prompt.details[0] ? ` (${prompt.details[0].slice(0, 120)})` : "";
	return `approval: ${prompt.tool}${what} -> ${decision.value} (${decision.reason})`;
}

/** y/yes/a/approve -> Approve; n/no/d/deny/empty -> Deny; anything else -> ask again. */
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
		});
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
		this.#opts.output.write(formatPrompt(pending.prompt, this.#opts.timeoutMs, this.#queue.length));
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
		if (!this.#current) return;
		const answer = readAnswer(line);
		if (answer) this.#settle(answer, "answered on the terminal");
		else this.#opts.output.write("Type y to approve or n to deny: ");
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
			let buf = "";
			for await (const chunk of input) {
				buf += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
				for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
					this.#onLine(buf.slice(0, nl).replace(/\r$/, ""));
					buf = buf.slice(nl + 1);
				}
			}
		})()
			.catch(() => {})
			.finally(() => this.#onClosed());
	}
}
