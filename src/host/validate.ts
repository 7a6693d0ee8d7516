/**
 * Arguments checked against the tool's own schema before `execute` (contract §15), the way the
 * host's loop checks its model's calls: the host's validator (it coerces, e.g. `123` → `"123"`),
 * the normalized arguments run, and a refusal names the argument. Tools that opt out of strict
 * checking (`lenientArgValidation`) run with the arguments as sent, as in the host's loop.
 */
import { showSafely } from "../text/show.ts";
import type { HostAccess, HostTool } from "./shapes.ts";

export type ArgCheck = { ok: true; args: Record<string, unknown> } | { ok: false; why: string };

/** Longest refusal text sent back; the host's message names every failing argument within it. */
const INVALID_ARGS_MAX_CHARS = 1000;

/** Deeper nesting than any tool schema uses; the host's recursive validator would overflow the stack. @internal */
export const MAX_ARG_DEPTH = 64;

/** The first top-level argument nested deeper than `max` levels, found without recursion; else null. @internal */
export function tooDeep(args: Record<string, unknown>, max = MAX_ARG_DEPTH): string | null {
	for (const [key, value] of Object.entries(args)) {
		const stack: Array<[unknown, number]> = [[value, 1]];
		while (stack.length > 0) {
			const [v, depth] = stack.pop() as [unknown, number];
			if (v === null || typeof v !== "object") continue;
			if (depth > max) return key;
			for (const child of Object.values(v)) stack.push([child, depth + 1]);
		}
	}
	return null;
}

export function checkArgs(host: HostAccess, tool: HostTool, name: string, args: Record<string, unknown>): ArgCheck {
	const deep = tooDeep(args);
	if (deep !== null) {
		const shown = showSafely(deep, 80);
		return {
			ok: false,
			why: `invalid arguments for tool '${name}': '${shown}' is nested deeper than ${MAX_ARG_DEPTH} levels`,
		};
	}
	if (!host.validateArgs) return { ok: true, args };
	const r = host.validateArgs(tool, name, args);
	if (r.ok) return { ok: true, args: isPlainArgs(r.args) ? r.args : args };
	if (tool.lenientArgValidation === true) return { ok: true, args };
	return { ok: false, why: invalidArgsText(name, r.why) };
}

/**
 * `invalid arguments for tool 'read': path: path must be … (was missing)` from the host's
 * multi-line text, without its echo of the received arguments (the caller sent them).
 * @internal
 */
export function invalidArgsText(name: string, hostMessage: string): string {
	const body = hostMessage.split(/\n\s*\nReceived arguments:/)[0] ?? hostMessage;
	const lines = body.split("\n").slice(1);
	const reasons = lines.map(l => l.trim().replace(/^- /, "")).filter(l => l.length > 0);
	const detail = reasons.length > 0 ? reasons.join("; ") : body.replace(/^Validation failed for tool "[^"]*":\s*/, "");
	const text = `invalid arguments for tool '${name}': ${detail.trim() || "rejected by its schema"}`;
	return text.length > INVALID_ARGS_MAX_CHARS ? `${text.slice(0, INVALID_ARGS_MAX_CHARS)}…` : text;
}

const isPlainArgs = (v: unknown): v is Record<string, unknown> =>
	v !== null && typeof v === "object" && !Array.isArray(v);
