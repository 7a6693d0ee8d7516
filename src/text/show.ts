/**
 * Caller-controlled text made safe for a terminal or a notification (contract §16): every C0/C1
 * control, DEL, format (Cf: bidi overrides and isolates, zero-width and invisible characters),
 * line/paragraph separator and lone surrogate is shown as a visible escape (`\x1b`, `\u202e`, `\r`),
 * never sent raw, so an approver reads exactly the characters that will run. Pure; a leaf module.
 */

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The characters a terminal or a renderer would interpret or hide instead of showing. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const HIDDEN_ALL = new RegExp(HIDDEN.source, "gu");

function escapeChar(ch: string): string {
	const named = NAMED[ch];
	if (named) return named;
	const cp = ch.codePointAt(0) ?? 0;
	if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, "0")}`;
	if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, "0")}`;
	return `\\u{${cp.toString(16)}}`;
}

/** True when `text` holds a character `showSafely` would escape. @internal */
export const hasHidden = (text: string): boolean => HIDDEN.test(text);

/**
 * `text` with each hidden character as its escape. With `max`, a longer result is cut at `max`
 * characters (never inside an escape) and ends with `… N more characters` counting what is not shown.
 */
export function showSafely(text: string, max?: number): string {
	const whole = text.replace(HIDDEN_ALL, escapeChar);
	if (max === undefined || whole.length <= max) return whole;
	let out = "";
	let shown = 0;
	const chars = Array.from(text);
	for (let i = 0; i < chars.length; i++) {
		const ch = chars[i] as string;
		const piece = HIDDEN.test(ch) ? escapeChar(ch) : ch;
		if (max !== undefined && out.length + piece.length > max) {
			return `${out}… ${chars.length - shown} more characters`;
		}
		out += piece;
		shown++;
	}
	return out;
}

/** Multi-line text (a notification): each line shown safely, the line breaks kept as breaks. */
export const showLinesSafely = (text: string): string =>
	text
		.split("\n")
		.map(line => showSafely(line))
		.join("\n");

/**
 * Caller text as one line that reads back to exactly its bytes (contract §19): `showSafely` with every
 * backslash doubled first, so each backslash shown starts an escape (`\\` is a backslash, `\n` a line
 * break) and a caller's literal `\n` never looks like a line break.
 */
export const showExactly = (text: string): string => showSafely(text.replaceAll("\\", "\\\\"));

/** A cut of shown text without a last backslash that began an escape the cut removed. */
export const withoutCutEscape = (cut: string): string => cut.replace(/(?<!\\)((?:\\\\)*)\\$/, "$1");

/** `shown` (a `showExactly` result) cut at `max` characters and ending in `…`. */
export function cutShown(shown: string, max: number): string {
	const chars = Array.from(shown);
	return chars.length <= max ? shown : `${withoutCutEscape(chars.slice(0, max).join(""))}…`;
}

const quoted = (text: string): string => showSafely(JSON.stringify(text));

/** Code points of `text` from `from` (forward) or up to `from` (backward) whose quoted form fits `budget`. */
function takeFitting(text: string, budget: number, backward: boolean): string {
	const taken: string[] = [];
	let used = 0;
	let i = backward ? text.length : 0;
	while (backward ? i > 0 : i < text.length) {
		const cp = backward ? (text.codePointAt(i - 2) ?? 0) : (text.codePointAt(i) ?? 0);
		// A pair is one code point; a lone surrogate is one unit.
		const pair = backward ? i >= 2 && cp > 0xffff : cp > 0xffff;
		const ch = backward ? text.slice(i - (pair ? 2 : 1), i) : text.slice(i, i + (pair ? 2 : 1));
		const cost = quoted(ch).length - 2;
		if (used + cost > budget) break;
		used += cost;
		taken.push(ch);
		i += backward ? -ch.length : ch.length;
	}
	return backward ? taken.reverse().join("") : taken.join("");
}

const countCodePoints = (text: string): number => {
	let n = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
			const d = text.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) i++;
		}
		n++;
	}
	return n;
};

/**
 * `showExactly` within about `max` characters: a longer text keeps its start and its end, each quoted
 * as a JSON string, with the count of characters between them not shown (`"start" … 1,234 characters
 * not shown … "end"`).
 */
export function showExactlyCut(text: string, max: number): string {
	const whole = showExactly(text);
	if (whole.length <= max) return whole;
	const head = takeFitting(text, Math.max(8, Math.floor(max * 0.7)), false);
	const tail = takeFitting(text, Math.max(4, max - Math.floor(max * 0.7)), true);
	const hidden = countCodePoints(text) - countCodePoints(head) - countCodePoints(tail);
	return `${quoted(head)} … ${hidden.toLocaleString("en-US")} characters not shown … ${quoted(tail)}`;
}
