/**
 * omp's approval dialog as a screen shows it (test/helpers/screen.ts), the host's TUI or a Collab guest's
 * (`omp join`), and the rules of issue 38 on its body: every row fits a 40-column guest and only the prompt's
 * own rows start unmarked.
 */
import { expect } from "bun:test";

/** Rows a 40-column Collab guest's dialog holds (columns − 4), whatever the host's width (src/text/rows.ts ROW_MAX). */
const GUEST_ROW = 36;

export interface Dialog {
	/** The title row, `╭─ Allow tool: … ─╮` (the TUI cuts it to the screen). */
	title: string;
	/** The rows inside the frame up to the options, frame and blank rows dropped. */
	body: string[];
}

/** The last approval dialog on screen, or null. */
export function dialog(rows: string[]): Dialog | null {
	const top = rows.findLastIndex(r => r.startsWith("╭─ Allow tool: "));
	const options = rows.findIndex((r, i) => i > top && r.includes("❯ Approve"));
	if (top < 0 || options < 0) return null;
	const body = rows
		.slice(top + 1, options)
		.map(r => r.replace(/^│ ?/, "").replace(/ *│$/, ""))
		.filter(r => r !== "");
	return { title: rows[top] ?? "", body };
}

/** The dialog's body as one text, row marks dropped (to find a marker the rows cut apart). */
export const bodyText = (d: Dialog): string => d.body.join("").replaceAll("┆ ", "");

/** The rules of issue 38 on a dialog's body: rows the guest holds; only the prompt's own rows unmarked. */
export function checkRows(body: string[]): void {
	for (const row of body) expect(Bun.stringWidth(row, { ambiguousIsNarrow: false })).toBeLessThanOrEqual(GUEST_ROW);
	// A marked row of blanks reads back as the mark alone (the screen's trailing blanks are trimmed).
	const own = body.filter(r => !(r === "┆" || r.startsWith("┆ ")));
	expect(own.map(r => r.slice(0, 9))).toEqual(["Command: ", "Remote ca"]);
	expect(own[0]).toStartWith("Command: ");
	expect(own[1]).toStartWith("Remote call (A2A)");
}
