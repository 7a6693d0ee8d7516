/**
 * Measures for the generated row tests (issue 38 rule 1): caller text made of the grapheme clusters terminals
 * disagree on, and a check that rows fit a screen by every width measure: omp's own `visibleWidth` (what the
 * TUI wraps by), the widest (ambiguous-wide) width, and a terminal emulator (@xterm/headless, its own tables).
 */
import { expect } from "bun:test";
import { dirname } from "node:path";
import { Terminal } from "@xterm/headless";
import fc from "fast-check";

/** omp's own width function: pi-tui as the pinned omp resolves it (the TUI wraps its dialog by it). */
const omp = dirname(Bun.resolveSync("@oh-my-pi/pi-coding-agent", import.meta.dir));
const { visibleWidth } = (await import(Bun.resolveSync("@oh-my-pi/pi-tui", omp))) as {
	visibleWidth(text: string): number;
};

const GRAPHEMES = [
	"a",
	" ",
	"Command: ls -la",
	"❯ Approve",
	"☺\ufe0f",
	"❤\ufe0f",
	"✔\ufe0f",
	"☺",
	"👨\u200d👩\u200d👧",
	"🇺🇸",
	"👍🏽",
	"#\ufe0f\u20e3",
	"界",
	"漢字",
	"±",
	"α",
	"┆",
	"—",
	"①",
	"e\u0301",
	"a\u0308\u0323",
	"\u1100\u1161\u11a8",
	"ㄱ",
	"©",
	"Ａ",
];
/** Caller text: up to 120 of these clusters (and `extra`) or short random strings. */
export const callerTextOf = (extra: readonly string[] = []) =>
	fc
		.array(fc.oneof(fc.constantFrom(...GRAPHEMES, ...extra), fc.string({ maxLength: 3 })), { maxLength: 120 })
		.map(a => a.join(""));

/** Each row written to an emulator `cols` wide: the rows it had to wrap (xterm's own width tables). */
async function wrappedByXterm(lines: string[], cols: number): Promise<number> {
	const term = new Terminal({ cols, rows: 10, scrollback: 4000, allowProposedApi: true });
	await new Promise<void>(r => term.write(lines.map(l => `${l}\r\n`).join(""), r));
	const buffer = term.buffer.active;
	let wrapped = 0;
	for (let i = 0; i < buffer.length; i++) if (buffer.getLine(i)?.isWrapped) wrapped++;
	term.dispose();
	return wrapped;
}

export async function fitsEveryMeasure(lines: string[], cols: number): Promise<void> {
	for (const line of lines) {
		expect(visibleWidth(line)).toBeLessThanOrEqual(cols);
		expect(Bun.stringWidth(line, { ambiguousIsNarrow: false })).toBeLessThanOrEqual(cols);
	}
	expect(await wrappedByXterm(lines, cols)).toBe(0);
}
