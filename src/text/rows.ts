/**
 * Lines laid out as terminal rows the caller cannot forge (contract §19). A terminal wraps a long line
 * on its own, so a caller who pads a value can start a row with any text, e.g. a fake `Approve?`. Here
 * every line is cut into rows of at most `width` columns before the terminal sees it, and every row
 * after a line's first, and every line after the first of a multi-line text, starts with CONTINUED:
 * only the first row of a line the prompt itself writes starts where the prompt's own lines start.
 * Widths are display columns (`Bun.stringWidth`: wide characters count 2). Pure.
 */

/** The mark at the start of every continuation row. */
export const CONTINUED = "┆ ";
const MIN_TEXT_COLUMNS = 16;

/** `text` as rows of at most `width` columns (Infinity: no cut), each prefixed with `indent`. */
export function rows(text: string, width: number, indent = ""): string[] {
	const out: string[] = [];
	text.split("\n").forEach((line, i) => {
		out.push(...lineRows(i === 0 ? line : `${CONTINUED}${line}`, width, indent));
	});
	return out;
}

function lineRows(line: string, width: number, indent: string): string[] {
	const first = indent;
	const next = `${indent}${CONTINUED}`;
	if (!Number.isFinite(width)) return [`${first}${line}`];
	const room = (prefix: string) => Math.max(MIN_TEXT_COLUMNS, width - Bun.stringWidth(prefix));
	const out: string[] = [];
	let prefix = first;
	let row = "";
	let used = 0;
	for (const ch of line) {
		const w = Bun.stringWidth(ch);
		if (used + w > room(prefix) && row !== "") {
			out.push(`${prefix}${row}`);
			prefix = next;
			row = "";
			used = 0;
		}
		row += ch;
		used += w;
	}
	out.push(`${prefix}${row}`);
	return out;
}
