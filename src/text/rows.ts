/**
 * Lines laid out as terminal rows the caller cannot forge (contract §19). A terminal wraps a long line
 * on its own, so a caller who pads a value can start a row with any text, e.g. a fake `Approve?`. Here
 * every line is cut into rows of at most `width` columns before any screen sees it, and every row
 * after a line's first, and every line after the first of a multi-line text, starts with CONTINUED:
 * only the first row of a line the prompt itself writes starts where the prompt's own lines start.
 *
 * Widths are counted per grapheme cluster (what omp's TUI and modern terminals measure) at the widest
 * any terminal may draw it: East-Asian ambiguous characters wide, a pictograph wide with or without
 * VS16, a cluster a terminal draws code point by code point at the sum of its parts. A cluster no
 * terminal agrees on (a control, long or very wide) is shown as escapes instead. Pure.
 */

/** The mark at the start of every continuation row. */
export const CONTINUED = "┆ ";

/**
 * Widest row of any prompt: every screen of at least ROW_MAX + 4 columns (omp's dialog holds
 * columns − 4) shows it whole, the host's terminal and a Collab guest (a phone) alike.
 * @internal
 */
export const ROW_MAX = 36;
/** Narrowest row a prompt is laid out in; below it a prompt shows a fixed text instead. @internal */
export const MIN_ROW = 16;
/** Widest cluster kept as it is; a wider one is escaped so it never fills a narrow row alone. */
const MAX_CLUSTER = 4;
const MAX_CLUSTER_POINTS = 8;

/**
 * The one rule for how wide a prompt's rows may be on a screen of `columns` columns of which `frame`
 * are the dialog's border: never wider than ROW_MAX (screens the host does not measure), nor than the
 * screen; null when fewer than MIN_ROW columns are left (the prompt cannot be shown whole there).
 */
export function rowWidth(columns: number, frame: number): number | null {
	const room = Math.floor(columns) - frame;
	return room >= MIN_ROW ? Math.min(ROW_MAX, room) : null;
}

const WIDE = { ambiguousIsNarrow: false } as const;
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** Drawn on the cell before it by every terminal: combining marks and variation selectors. */
const ON_PREVIOUS = /^[\p{Mn}\p{Me}]$/u;
/** Drawn two cells wide by some terminal whatever its presentation selector says. */
const PICTURE = /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier})$/u;
/** What a terminal interprets or hides instead of drawing (src/text/show.ts escapes these too). */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const PRINTABLE_ASCII = /^[\x20-\x7e]$/;

function pointWidth(cp: string): number {
	if (ON_PREVIOUS.test(cp)) return 0;
	return Math.max(1, Bun.stringWidth(cp, WIDE), PICTURE.test(cp) ? 2 : 0);
}

/** Columns `cluster` may take on the widest-drawing terminal. */
function clusterWidth(cluster: string): number {
	if (PRINTABLE_ASCII.test(cluster)) return 1;
	let sum = 0;
	for (const cp of cluster) sum += pointWidth(cp);
	return Math.max(1, sum, Bun.stringWidth(cluster, WIDE));
}

/** `text`'s widest width in columns, cluster by cluster. */
export function textWidth(text: string): number {
	let w = 0;
	for (const { segment } of segmenter.segment(text)) w += clusterWidth(segment);
	return w;
}

const escaped = (cluster: string): string[] =>
	Array.from(cluster, cp => `\\u{${(cp.codePointAt(0) ?? 0).toString(16)}}`).flatMap(e => Array.from(e));

/** The clusters of `text` with their widths, a cluster no terminal agrees on replaced by its escapes. */
function clusters(text: string): { text: string; width: number }[] {
	const out: { text: string; width: number }[] = [];
	for (const { segment } of segmenter.segment(text)) {
		const width = clusterWidth(segment);
		const odd = width > MAX_CLUSTER || HIDDEN.test(segment) || Array.from(segment).length > MAX_CLUSTER_POINTS;
		if (odd) for (const ch of escaped(segment)) out.push({ text: ch, width: 1 });
		else out.push({ text: segment, width });
	}
	return out;
}

/** `text` as rows of at most `width` (>= MIN_ROW) columns (Infinity: no cut), each prefixed with `indent`. */
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
	const room = (prefix: string) => Math.max(MAX_CLUSTER, width - textWidth(prefix));
	const out: string[] = [];
	let prefix = first;
	let free = room(first);
	let row = "";
	let used = 0;
	for (const c of clusters(line)) {
		if (used + c.width > free && row !== "") {
			out.push(`${prefix}${row}`);
			prefix = next;
			free = room(next);
			row = "";
			used = 0;
		}
		row += c.text;
		used += c.width;
	}
	out.push(`${prefix}${row}`);
	return out;
}

/** `text` cut to at most `columns` columns, ending in `…` when cut (`…` counts at its widest). */
export function fitWidth(text: string, columns: number): string {
	if (textWidth(text) <= columns) return text;
	let out = "";
	let used = textWidth("…");
	for (const c of clusters(text)) {
		if (used + c.width > columns) break;
		out += c.text;
		used += c.width;
	}
	return `${out}…`;
}
