/**
 * Issue 38 rule 1 for the lines around the prompts: the host notice before a remote call's prompt (omp's
 * TUI shows it as ` Warning: <notice>`) and `npm run host`'s own lines (host notices, decisions, cancelled
 * dialogs, the waiting note). Generated caller text (emoji, VS16, ZWJ, flags, CJK, ambiguous, combining
 * marks) on screens of 20–200 columns, read back by @xterm/headless and omp's own `visibleWidth`: no row
 * wraps on the screen nor on any screen of ROW_MAX + 4 columns, and every row starts with the bridge's own
 * text or the continuation mark. The notice is still read back by the headless host (`parseCallerLabel`).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseCallerLabel } from "../../../src/headless/frames.ts";
import {
	cancelledLine,
	describeDecision,
	LINE_TOO_NARROW,
	noticeLine,
	screenRows,
	waitingLine,
} from "../../../src/headless/prompt-screen.ts";
import { callerLabel, noticeRowWidth } from "../../../src/host/remote-calls.ts";
import { CONTINUED, ROW_MAX } from "../../../src/text/rows.ts";
import { callerTextOf, fitsEveryMeasure } from "../../helpers/row-measure.ts";

/** Beyond the shared clusters: padding, the bridge's own words, and line breaks (host notices keep them). */
const callerText = callerTextOf(["          ", "Approve? bash", "host: ", "\n"]);

/** The narrowest screen a row laid out for `columns` must fit whole: that one, or a guest's of ROW_MAX + 4. */
const screens = (columns: number): number[] => [...new Set([columns, Math.min(columns, ROW_MAX + 4)])];

describe("rule 1, generated: the notice before a remote call's prompt in omp's TUI", () => {
	test("` Warning: ` and the notice's rows fit screens of 20–200 columns and 40; caller text starts no row; still parsed", async () => {
		await fc.assert(
			fc.asyncProperty(callerText, fc.integer({ min: 20, max: 200 }), async (client, columns) => {
				const caller = { tokenName: "owner", client: `laptop${client}` };
				const notice = callerLabel("bash", caller, noticeRowWidth({ isTTY: true, columns }));
				const [first, ...next] = notice.split("\n");
				// omp's showWarning: `Warning: ` before the message, one column of padding each side.
				const shown = [` Warning: ${first}`, ...next.map(r => ` ${r}`)];
				for (const cols of screens(columns)) await fitsEveryMeasure(shown, cols);
				expect(first).toStartWith("A2A re");
				for (const row of next) expect(row).toStartWith(CONTINUED);
				const parsed = parseCallerLabel(notice);
				expect(parsed?.tool).toBe("bash");
				expect(parsed?.tokenName).toBe("owner");
				expect(parsed?.client).toStartWith("laptop");
			}),
			{ numRuns: 150 },
		);
	}, 120_000);

	test("over rpc (not a terminal) the notice is one line, parsed back exactly; too narrow a screen: fixed text", () => {
		const caller = { tokenName: "ci", client: `laptop${" ".repeat(40)}Command: ls -la` };
		const notice = callerLabel("bash", caller, noticeRowWidth({ isTTY: false, columns: 80 }));
		expect(notice.split("\n")).toHaveLength(1);
		expect(parseCallerLabel(notice)).toEqual({ tool: "bash", tokenName: "ci", client: caller.client });
		const tui = callerLabel("bash", caller, noticeRowWidth({ isTTY: true, columns: 80 }));
		const own = tui.split("\n").filter(r => !r.startsWith(CONTINUED));
		expect(own).toHaveLength(1);
		expect(own[0]).toStartWith("A2A remote call: bash");
		expect(parseCallerLabel(tui)).toEqual({ tool: "bash", tokenName: "ci", client: caller.client });
		const narrow = callerLabel("bash", caller, noticeRowWidth({ isTTY: true, columns: 17 }));
		expect(narrow).not.toContain("laptop");
		expect(parseCallerLabel(narrow)).toBeNull();
	});
});

/** How every row `npm run host` prints here starts, when it is not a continuation row. */
const OWN = ["host: ", "host [warning]: ", "approval: bash", "host asked (", "(a prompt waits"];

describe("rule 1, generated: `npm run host`'s own lines", () => {
	test("notices, decisions, cancelled dialogs and the waiting note fit screens of 20–200 columns and 40; caller text starts no row", async () => {
		await fc.assert(
			fc.asyncProperty(
				callerText,
				callerText,
				callerText,
				fc.integer({ min: 20, max: 200 }),
				async (command, client, message, columns) => {
					const prompt = {
						id: "1",
						tool: "bash",
						start: `Command: ${command}`,
						details: [`Command: ${command}`, 'cwd: "/srv"'],
						caller: { tokenName: "owner", client: `laptop${client}` },
					};
					const texts = [
						noticeLine(message, "info"),
						noticeLine(message, "warning"),
						describeDecision(prompt, { value: "Approve", reason: "answered on the terminal" }),
						cancelledLine("input", `${message}\n${command}`),
						waitingLine("bash", "owner"),
					];
					const shown = texts.flatMap(t => screenRows(t, columns));
					for (const cols of screens(columns)) await fitsEveryMeasure(shown, cols);
					for (const row of shown) expect([CONTINUED, ...OWN].some(start => row.startsWith(start)) ? "" : row).toBe("");
				},
			),
			{ numRuns: 150 },
		);
	}, 120_000);

	test("a terminal under 16 columns gets a fixed line; not a terminal: each line whole, later lines marked", () => {
		expect(screenRows(noticeLine("secret-ish caller text", "info"), 15)).toEqual([LINE_TOO_NARROW]);
		expect(screenRows("host: a\nb", Number.POSITIVE_INFINITY)).toEqual(["host: a", `${CONTINUED}b`]);
		const long = `host: ${"x".repeat(300)}`;
		expect(screenRows(long, Number.POSITIVE_INFINITY)).toEqual([long]);
		expect(screenRows(long, 200).every(r => r.length <= ROW_MAX)).toBe(true);
	});
});
