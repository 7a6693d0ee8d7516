/**
 * What runs without a prompt (contract §16, §19): each of the host's tools run through the host's own
 * `resolveApproval` under the live mode and `tools.approval`, so the list follows the host's tiers, not a
 * list kept here. A tool whose tier depends on its arguments is asked once per value of its first
 * enumerated parameter (`action`, `op`, …), and again with each other parameter set, so an action that
 * prompts only with some argument says so (`hub`: `send (with name: may prompt)`). Parameters are the
 * tool's JSON Schema (the host's own wire schema, `approvals-live.ts`). `bash.patterns` rules are
 * described from their meaning in the host (`tools/bash.ts`): allow vouches for a whole command; deny and
 * prompt fire on any segment. Pure.
 */
import { showSafely } from "../text/show.ts";

/** omp's approval modes (the same three `approvals.ts` describes). */
type ApprovalMode = "yolo" | "write" | "always-ask";

export interface PictureTool {
	name: string;
	approval?: unknown;
	/** The tool's parameters as JSON Schema (`properties`, `enum`, `anyOf` of `const`). */
	parameters?: unknown;
}

/** The host's `resolveApproval(tool, args, mode, userConfig)`, only its `policy` is read. */
export type ResolveApproval = (
	tool: { name: string; approval?: never },
	args: unknown,
	mode: ApprovalMode,
	userConfig: Record<string, unknown>,
) => { policy: string };

const propertiesOf = (parameters: unknown): Record<string, unknown> => {
	const props = (parameters as { properties?: unknown } | undefined)?.properties;
	return typeof props === "object" && props !== null ? (props as Record<string, unknown>) : {};
};

/** The values a JSON Schema property enumerates (`enum`, or `anyOf` of `const` only), else undefined. */
function valuesOf(raw: unknown): unknown[] | undefined {
	const p = raw as { enum?: unknown; anyOf?: unknown; const?: unknown } | null;
	if (Array.isArray(p?.enum) && p.enum.length > 0) return p.enum;
	if (Array.isArray(p?.anyOf)) {
		const values = p.anyOf.map(a => (a as { const?: unknown }).const).filter(v => v !== undefined);
		if (values.length > 0 && values.length === p.anyOf.length) return values;
	}
	return p?.const === undefined ? undefined : [p.const];
}

/** Values to try for the first parameter that enumerates them. */
function enumerated(parameters: unknown): { key: string; values: unknown[] } | undefined {
	for (const [key, raw] of Object.entries(propertiesOf(parameters))) {
		const values = valuesOf(raw);
		if (values) return { key, values };
	}
	return undefined;
}

/** A value of the property's type, to see whether setting it changes the host's decision. */
function sample(raw: unknown): unknown {
	const listed = valuesOf(raw);
	if (listed) return listed[0];
	const p = raw as { type?: unknown; anyOf?: unknown } | null;
	const type = Array.isArray(p?.type) ? p.type[0] : p?.type;
	if (type === "number" || type === "integer") return 1;
	if (type === "boolean") return true;
	if (type === "array") return ["x"];
	if (type === "object") return {};
	if (type === undefined && Array.isArray(p?.anyOf) && p.anyOf.length > 0) return sample(p.anyOf[0]);
	return "x";
}

function allowed(resolve: ResolveApproval, tool: PictureTool, args: unknown, mode: ApprovalMode, policies: object) {
	try {
		return resolve(tool as never, args, mode, policies as Record<string, unknown>).policy === "allow";
	} catch {
		return false;
	}
}

/**
 * `base` run without a prompt, and the other parameters that change that when set: "" when none does,
 * else ` (with name: may prompt)` for an open call, ` (only with to)` for a closed one.
 */
function openWith(
	resolve: ResolveApproval,
	tool: PictureTool,
	base: Record<string, unknown>,
	mode: ApprovalMode,
	policies: object,
): { open: boolean; note: string } {
	const open = allowed(resolve, tool, base, mode, policies);
	if (typeof tool.approval !== "function") return { open, note: "" };
	const flips = Object.entries(propertiesOf(tool.parameters))
		.filter(([key]) => !Object.hasOwn(base, key))
		.filter(([key, raw]) => allowed(resolve, tool, { ...base, [key]: sample(raw) }, mode, policies) !== open)
		.map(([key]) => key);
	if (flips.length === 0) return { open, note: "" };
	return open
		? { open, note: ` (with ${flips.join(", ")}: may prompt)` }
		: { open: true, note: ` (only with ${flips.join(", ")})` };
}

/** `read`, `lsp (action status, symbols)`, `hub (op send (with name: may prompt), list, …)`: what runs without a prompt. */
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
			const { open, note } = openWith(resolve, tool, {}, mode, policies);
			if (open) out.push(`${tool.name}${note}`);
			continue;
		}
		const each = byArgs.values.map(v => ({ v, ...openWith(resolve, tool, { [byArgs.key]: v }, mode, policies) }));
		const open = each.filter(e => e.open);
		if (open.length === each.length && open.every(e => e.note === "")) out.push(tool.name);
		else if (open.length > 0)
			out.push(`${tool.name} (${byArgs.key} ${open.map(e => `${String(e.v)}${e.note}`).join(", ")})`);
	}
	return out.map(name => showSafely(name, 400));
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
