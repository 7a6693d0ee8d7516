/**
 * Redaction of tool arguments for the audit log (contract §9): string leaves over LEAF_MAX_CHARS become
 * `<len:N,sha256:first 8 hex>` at any depth, nesting past MAX_DEPTH becomes `<max-depth>`, the result is
 * cut to ARGS_MAX_CHARS. A scrub (the live secrets -> `<token>`) runs on every string and key first, before
 * any digest, escaping or cut, so no whole, escaped or cut copy survives. Pure, and it never throws.
 */
import { createHash } from "node:crypto";

/** @internal */
export const ARGS_MAX_CHARS = 1024;
/** @internal */
export const LEAF_MAX_CHARS = 120;
/** @internal */
export const MAX_DEPTH = 32;

const digest8 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex").slice(0, 8);

/** `<len:N,sha256:xxxxxxxx>`: what the log keeps of a string too long to keep. */
export const digestString = (value: string): string => `<len:${value.length},sha256:${digest8(value)}>`;

/** Replaces what must never reach the file (the live secrets) in one string. */
export type Scrub = (text: string) => string;
const keep: Scrub = text => text;

/** A string over LEAF_MAX_CHARS as its digest; shorter ones as they are (scrubbed first). */
export const capString = (value: string, scrub: Scrub = keep): string => {
	const clean = scrub(value);
	return clean.length > LEAF_MAX_CHARS ? digestString(clean) : clean;
};

/** Any audit field capped like the leaves of `args` (strings, nesting); never throws. */
export function capValue(value: unknown, scrub: Scrub = keep): unknown {
	try {
		return redactValue(value, 0, new Set(), scrub);
	} catch {
		return "<unserializable>";
	}
}

/** Long string leaves become `<len:N,sha256:xxxxxxxx>` at any depth; past MAX_DEPTH, `<max-depth>`. */
function redactValue(value: unknown, depth: number, seen: Set<object>, scrub: Scrub): unknown {
	if (typeof value === "string") return capString(value, scrub);
	if (typeof value === "bigint") return value.toString();
	if (value === null || typeof value !== "object") return typeof value === "function" ? undefined : value;
	if (depth > MAX_DEPTH) return "<max-depth>";
	if (seen.has(value)) return "<circular>";
	seen.add(value);
	try {
		if (Array.isArray(value)) return value.map(v => redactValue(v, depth + 1, seen, scrub) ?? null);
		// No prototype: a `__proto__` key is kept as data instead of setting the copy's prototype.
		const out: Record<string, unknown> = Object.create(null);
		for (const [k, v] of Object.entries(value)) {
			const r = redactValue(v, depth + 1, seen, scrub);
			if (r !== undefined) out[scrub(k)] = r;
		}
		return out;
	} finally {
		seen.delete(value);
	}
}

/** The `args` field: redacted, serialized, cut to ARGS_MAX_CHARS plus `…`. Never throws. */
export function redactArgs(args: unknown, scrub: Scrub = keep): string {
	let text: string;
	try {
		text = JSON.stringify(redactValue(args, 0, new Set(), scrub)) ?? "null";
	} catch {
		text = '"<unserializable>"';
	}
	return text.length > ARGS_MAX_CHARS ? `${text.slice(0, ARGS_MAX_CHARS)}…` : text;
}
