/**
 * What runs without a prompt (contract §16): each of the host's tools run through the host's own
 * `resolveApproval` under the live mode and `tools.approval`, so the list follows the host's tiers, not a
 * list kept here. A tool whose tier depends on its arguments is asked once per value of its first
 * enumerated parameter (`action`, `op`, …). `bash.patterns` rules are described from their meaning in the
 * host (`tools/bash.ts`): allow vouches for a whole command; deny and prompt fire on any segment. Pure.
 */
import { showSafely } from "../text/show.ts";

/** omp's approval modes (the same three `approvals.ts` describes). */
type ApprovalMode = "yolo" | "write" | "always-ask";

export interface PictureTool {
	name: string;
	approval?: unknown;
	parameters?: unknown;
}

/** The host's `resolveApproval(tool, args, mode, userConfig)`, only its `policy` is read. */
export type ResolveApproval = (
	tool: { name: string; approval?: never },
	args: unknown,
	mode: ApprovalMode,
	userConfig: Record<string, unknown>,
) => { policy: string };

/** Values to try for the first parameter that enumerates them (JSON Schema `enum` or `anyOf` of `const`). */
function enumerated(parameters: unknown): { key: string; values: unknown[] } | undefined {
	const props = (parameters as { properties?: Record<string, unknown> } | undefined)?.properties;
	if (typeof props !== "object" || props === null) return undefined;
	for (const [key, raw] of Object.entries(props)) {
		const p = raw as { enum?: unknown; anyOf?: unknown };
		if (Array.isArray(p.enum) && p.enum.length > 0) return { key, values: p.enum };
		if (Array.isArray(p.anyOf)) {
			const values = p.anyOf.map(a => (a as { const?: unknown }).const).filter(v => v !== undefined);
			if (values.length > 0 && values.length === p.anyOf.length) return { key, values };
		}
	}
	return undefined;
}

function allowed(resolve: ResolveApproval, tool: PictureTool, args: unknown, mode: ApprovalMode, policies: object) {
	try {
		return resolve(tool as never, args, mode, policies as Record<string, unknown>).policy === "allow";
	} catch {
		return false;
	}
}

/** `read`, `lsp (action status, symbols)`, … : every tool or action that runs without a prompt. */
export function unprompted(
	tools: readonly PictureTool[],
	mode: ApprovalMode,
	policies: object,
	resolve: ResolveApproval,
): string[] {
	const out: string[] = [];
	for (const tool of tools) {
		const byArgs = typeof tool.approval === "function" ? enumerated(tool.parameters) : undefined;
		if (!byArgs) {
			if (allowed(resolve, tool, {}, mode, policies)) out.push(tool.name);
			continue;
		}
		const open = byArgs.values.filter(v => allowed(resolve, tool, { [byArgs.key]: v }, mode, policies));
		if (open.length === byArgs.values.length) out.push(tool.name);
		else if (open.length > 0) out.push(`${tool.name} (${byArgs.key} ${open.map(v => String(v)).join(", ")})`);
	}
	return out.map(name => showSafely(name, 120));
}

interface PatternRule {
	match: string;
	approval: "allow" | "deny" | "prompt";
}

/** `bash.patterns` entries the host honours (same normalisation as omp `getBashApprovalPatternRules`). @internal */
export function bashPatternRules(raw: unknown): PatternRule[] {
	if (!Array.isArray(raw)) return [];
	const rules: PatternRule[] = [];
	for (const item of raw) {
		if (typeof item !== "object" || item === null || Array.isArray(item)) continue;
		const { match, approval } = item as Record<string, unknown>;
		const m = typeof match === "string" ? match.trim().replace(/\s+/gu, " ") : "";
		const a = typeof approval === "string" ? approval.trim().toLowerCase() : "";
		if (m && (a === "allow" || a === "deny" || a === "prompt")) rules.push({ match: m, approval: a });
	}
	return rules;
}

const PATTERN_WORDS: Record<PatternRule["approval"], string> = {
	allow:
		"a remote bash whose whole command matches (no ; && | or other shell control) runs WITHOUT a prompt in every mode; close it: remove the rule or set tools.approval.bash: deny",
	deny: "a remote bash with any segment matching is refused in every mode, yolo too",
	prompt:
		"a remote bash with any segment matching prompts in every mode, yolo too (tools.approval.bash: deny refuses first)",
};

/** One line per `bash.patterns` rule, in the host's first-match order. */
export function describeBashPatterns(raw: unknown): string[] {
	return bashPatternRules(raw).map(
		(r, i) => `  bash.patterns[${i}] ${r.approval} '${showSafely(r.match, 200)}': ${PATTERN_WORDS[r.approval]}`,
	);
}
