/**
 * The argument lines of a remote call's approval prompt (contract §19, src/host/prompt-text.ts): one
 * line per argument the tool's own detail lines do not show whole, and for a long structured argument
 * one line per value inside it, so every key is shown (`bash` `env`: each variable) and each long value keeps its
 * start and end. Caller text is shown exactly (src/text/show.ts); a key the tool does not declare follows fixed
 * words, so no line starts with a caller's key. Pure.
 */
import { createHash } from "node:crypto";
import { showExactly, showExactlyCut, showSafely } from "../text/show.ts";

/** Shown characters of one value: about eight rows of a wide screen. */
export const VALUE_MAX = 560;
/** A text argument longer than this (about three rows) also shows its size and SHA-256. */
const DIGEST_FROM = 200;
/** A structured argument whose JSON is longer than this is shown value by value. */
const INLINE_MAX = 160;
/** Shown characters of one value inside a structured argument. */
const LEAF_MAX = 160;
/** Values of one structured argument shown; the rest are counted, never silently left out. */
const MAX_LEAVES = 40;
/** Nesting shown as paths; anything deeper is one value. */
const MAX_DEPTH = 6;

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
export function hostCopy(detail: string, value: string): "whole" | "cut" | null {
	const label = LABEL.exec(detail)?.[0];
	if (label === undefined || value === "") return null;
	const rest = detail.slice(label.length);
	if (rest === value) return "whole";
	const elided = HOST_CUT.exec(rest);
	return elided && rest.length > elided[0].length && value.startsWith(rest.slice(0, -elided[0].length)) ? "cut" : null;
}

const NAME = /^[A-Za-z_][\w.-]{0,63}$/;
const PART = /^[A-Za-z_][\w-]{0,63}$/;

/** The line of one argument, and its start without size and digest (for the first line of the title). */
export interface ArgumentLine {
	line: string;
	start: string;
}

function jsonOf(value: unknown): string {
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
}

/** One value inside a structured argument: a string quoted (start and end when long), else its JSON. */
function leafText(value: unknown): string {
	if (typeof value === "string") {
		const quoted = showSafely(JSON.stringify(value));
		return quoted.length <= LEAF_MAX ? quoted : showExactlyCut(value, LEAF_MAX);
	}
	return showSafely(jsonOf(value), LEAF_MAX);
}

const keyPath = (path: string, key: string): string =>
	PART.test(key) ? `${path}.${key}` : `${path}[${leafText(key)}]`;

/** Every value of `value` as `path: value`, depth first; `count` counts those past MAX_LEAVES too. */
function leaves(value: unknown, path: string, out: string[], depth: number): number {
	const nested = typeof value === "object" && value !== null && depth < MAX_DEPTH;
	const entries = !nested
		? []
		: Array.isArray(value)
			? value.map((v, i) => [`${path}[${i}]`, v] as const)
			: Object.entries(value).map(([k, v]) => [keyPath(path, k), v] as const);
	if (entries.length === 0) {
		if (out.length < MAX_LEAVES) out.push(`${path}: ${leafText(value)}`);
		return 1;
	}
	let count = 0;
	for (const [p, v] of entries) count += leaves(v, p, out, depth + 1);
	return count;
}

/** A structured argument: one line when short, else a line with its size and digest and one per value. */
function structuredLines(name: string, value: unknown): ArgumentLine[] {
	const json = jsonOf(value);
	if (json.length <= INLINE_MAX) {
		const line = `${name}: ${showSafely(json)}`;
		return [{ line, start: line }];
	}
	const shown: string[] = [];
	const count = leaves(value, name, shown, 0);
	const more =
		count > shown.length ? [`${name}: ${(count - shown.length).toLocaleString("en-US")} more values not shown`] : [];
	const head = `${name}: ${count.toLocaleString("en-US")} values, ${digest(json)}`;
	return [head, ...shown, ...more].map((line, i) => ({ line, start: i === 1 ? line : "" }));
}

/** One line per argument the tool's detail lines do not show whole; a long one with its size and digest. */
export function argumentLines(
	args: Record<string, unknown>,
	order: readonly string[],
	details: readonly string[],
): ArgumentLine[] {
	const known = order.filter(k => Object.hasOwn(args, k));
	const extra = Object.keys(args)
		.filter(k => !order.includes(k))
		.sort();
	const out: ArgumentLine[] = [];
	for (const key of [...known, ...extra]) {
		const value = args[key];
		if (value === undefined) continue;
		// A key the schema does not declare is the caller's text: it never starts a line (it could read as a
		// detail line, `Command:`, or the dialog's own option), so it follows fixed words, quoted.
		const declared = order.includes(key);
		const name = !declared ? `undeclared argument ${leafText(key)}` : NAME.test(key) ? key : showExactlyCut(key, 80);
		if (typeof value !== "string") {
			out.push(...structuredLines(name, value));
			continue;
		}
		if (details.some(d => hostCopy(d, value) === "whole")) {
			if (isLong(value)) out.push({ line: `${name}: ${digest(value)} (shown above)`, start: "" });
			continue;
		}
		const shown = isLong(value) ? showExactlyCut(value, VALUE_MAX) : showExactly(value);
		const line = isLong(value) ? `${name} (${digest(value)}): ${shown}` : `${name}: ${shown}`;
		out.push({ line, start: `${name}: ${shown}` });
	}
	return out;
}
