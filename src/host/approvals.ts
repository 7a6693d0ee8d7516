/**
 * The approval picture (contract §14): the host's approval mode, its per-tool policies and the `/blob`
 * switch in plain words, and what each means for a remote call. Pure: the host's values come in as
 * arguments (`approvals-live.ts` reads them), so the words follow the host's own rules (omp
 * `resolveApproval`: deny first, then yolo, then tool and user policies, then the mode's tier).
 */
import type { BlobMode } from "../config/tokens.ts";
import { showSafely } from "../text/show.ts";
import { describeBashPatterns } from "./unprompted.ts";

const APPROVAL_MODES = ["yolo", "write", "always-ask"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];
/** @internal */
export type ToolPolicy = "allow" | "deny" | "prompt";

/** The host reads any unknown mode as yolo; the picture must say the same. */
export function effectiveMode(raw: unknown): ApprovalMode {
	return APPROVAL_MODES.includes(raw as ApprovalMode) ? (raw as ApprovalMode) : "yolo";
}

/** `tools.approval` entries the host honours (case-insensitive allow|deny|prompt), sorted by tool name. @internal */
export function effectivePolicies(raw: unknown): Array<[string, ToolPolicy]> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return [];
	const out: Array<[string, ToolPolicy]> = [];
	for (const [tool, value] of Object.entries(raw)) {
		const p = typeof value === "string" ? value.trim().toLowerCase() : "";
		if (p === "allow" || p === "deny" || p === "prompt") out.push([tool, p]);
	}
	return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const PROMPTS =
	"a prompt waits for whoever answers the host: a dialog in the TUI; under `npm run host`, its --approvals (deny refuses at once)";

/** Who may answer a prompt (issue 40): omp races the TUI dialog with Collab writers; the bridge adds no answerer. */
const ANSWERERS =
	"  who answers a prompt: the host's own terminal (the TUI's dialog, or `npm run host`) and, while the TUI shares its session with omp's Collab, every holder of the control link; not a view link, and never the MCP caller: nothing it sends reaches the dialog";

const MODE_WORDS: Record<ApprovalMode, string> = {
	yolo: "yolo: remote calls run every tool without a prompt (only tools.approval deny/prompt entries and bash.patterns deny/prompt rules stop one)",
	write: `write: tools of the host's read and write tiers run; exec-tier tools prompt — ${PROMPTS}`,
	"always-ask": `always-ask: tools of the host's read tier run; every other tool prompts — ${PROMPTS}`,
};

const POLICY_WORDS: Record<ToolPolicy, string> = {
	deny: "refused to every caller, before any prompt",
	prompt: "prompts on every call, whatever the mode",
	allow: "runs without a prompt (unless the tool itself asks, e.g. a critical bash pattern outside yolo)",
};

/** omp's bash lets a `bash.patterns` allow rule win over a user `prompt` policy: the words say so. */
const policyWords = (tool: string, p: ToolPolicy): string =>
	tool === "bash" && p === "prompt"
		? "prompts on every call, whatever the mode, except a command a bash.patterns allow rule matches"
		: POLICY_WORDS[p];

const BLOB_WORDS: Record<BlobMode, string> = {
	write:
		'blob=write: /blob reads and writes any file the host\'s user can, outside the approval gate (set "blob": "read" or "off" to narrow it)',
	read: "blob=read: /blob downloads any file the host's user can read, outside the approval gate; uploads get 403",
	off: "blob=off: /blob answers 403 to every request",
};

/** An unprompted `hub` outside yolo is a way to everything: the agents it messages run without prompts. */
const HUB_WORDS =
	"  hub sends the caller's words to the host's other agents (a task's peers), which omp runs in yolo without prompts: set tools.approval.hub: prompt (or deny) so nothing runs unasked";

/** What the live host says beyond its settings: the tools that run unprompted and the `bash.patterns` rules. */
export interface LiveRules {
	/** Every tool or action the host runs without a prompt now; undefined when the host's tools were not read. */
	unprompted?: string[];
	bashPatterns?: unknown;
}

/**
 * The picture, one line each: mode, who answers a prompt, the tools and actions that run without a prompt, each per-tool policy,
 * each `bash.patterns` rule, the `/blob` switch.
 */
export function describeApprovals(mode: unknown, policies: unknown, blob: BlobMode, live: LiveRules = {}): string[] {
	const m = effectiveMode(mode);
	const shown =
		typeof mode === "string" && mode !== m ? ` (configured '${mode}' is not a mode; the host reads it as yolo)` : "";
	const lines = [`approvals: ${MODE_WORDS[m]}${shown}`, ANSWERERS];
	if (live.unprompted) {
		const list = live.unprompted.length > 0 ? live.unprompted.join(", ") : "none";
		lines.push(
			`  runs without a prompt (the host's own tiers, live settings): ${list}; close one with tools.approval.<tool>: deny`,
		);
		if (m !== "yolo" && live.unprompted.some(t => t === "hub" || t.startsWith("hub ("))) lines.push(HUB_WORDS);
	}
	for (const [tool, p] of effectivePolicies(policies))
		lines.push(`  tools.approval.${showSafely(tool, 120)}=${p}: ${showSafely(tool, 120)} ${policyWords(tool, p)}`);
	lines.push(...describeBashPatterns(live.bashPatterns));
	lines.push(BLOB_WORDS[blob]);
	return lines;
}
