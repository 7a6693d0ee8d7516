/**
 * Redaction of tool arguments for the audit log (contract §9): string leaves over LEAF_MAX_CHARS become
 * `<len:N,sha256:first 8 hex>` at any depth, nesting past MAX_DEPTH becomes `<max-depth>`, the result is
 * cut to ARGS_MAX_CHARS. Pure, and it never throws: unserializable arguments still give a value.
 */
import { createHash } from "node:crypto";

export const ARGS_MAX_CHARS = 1024;
export const LEAF_MAX_CHARS = 120;
export const MAX_DEPTH = 32;

const digest8 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex").slice(0, 8);

/** `<len:N,sha256:xxxxxxxx>`: what the log keeps of a string too long to keep. */
export const digestString = (value: string): string => `<len:${value.length},sha256:${digest8(value)}>`;

/** A string over LEAF_MAX_CHARS as its digest; shorter ones as they are. */
export const capString = (value: string): string => (value.length > LEAF_MAX_CHARS ? digestString(value) : value);

/** Any audit field capped like the leaves of `args` (strings, nesting); never throws. */
export function capValue(value: unknown): unknown {
	try {
		return redactValue(value, 0, new Set());
	} catch {
		return "<unserializable>";
	}
}

/** Long string leaves become `<len:N,sha256:xxxxxxxx>` at any depth; past MAX_DEPTH, `<max-depth>`. */
function redactValue(value: unknown, depth: number, seen: Set<object>): unknown {
	if (typeof value === "string") return capString(value);
	if (typeof value === "bigint") return value.toString();
	if (value === null || typeof value !== "object") return typeof value === "function" ? undefined : value;
	if (depth > MAX_DEPTH) return "<max-depth>";
	if (seen.has(value)) return "<circular>";
	seen.add(value);
	try {
		if (Array.isArray(value)) return value.map(v => redactValue(v, depth + 1, seen) ?? null);
		// No prototype: a `__proto__` key is kept as data instead of setting the copy's prototype.
		const out: Record<string, unknown> = Object.create(null);
		for (const [k, v] of Object.entries(value)) {
			const r = redactValue(v, depth + 1, seen);
			if (r !== undefined) out[k] = r;
		}
		return out;
	} finally {
		seen.delete(value);
	}
}

/** The `args` field: redacted, serialized, cut to ARGS_MAX_CHARS plus `…`. Never throws. */
export function redactArgs(args: unknown): string {
	let text: string;
	try {
		text = JSON.stringify(redactValue(args, 0, new Set())) ?? "null";
	} catch {
		text = '"<unserializable>"';
	}
	return text.length > ARGS_MAX_CHARS ? `${text.slice(0, ARGS_MAX_CHARS)}…` : text;
}
