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
