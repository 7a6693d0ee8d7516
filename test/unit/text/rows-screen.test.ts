/**
 * Generated test of issue 38 class 1 (a row is a row on every screen): random grapheme sequences
 * (emoji, VS16, ZWJ, flags, CJK, East-Asian ambiguous, combining marks, Hangul jamo) as a command and a
 * client name, laid out for a screen of 20–200 columns, then read back by a terminal emulator
 * (@xterm/headless, its own width tables) and by omp's own width function (pi-tui `visibleWidth`, what
 * the TUI wraps by) and at the ambiguous-wide width: no row wraps, and every row the prompt did not
 * write itself starts with the mark. Both the TUI dialog's title and the headless host's prompt.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseApprovalTitle } from "../../../src/headless/frames.ts";
import { formatPrompt } from "../../../src/headless/prompt-screen.ts";
import { approvalTitle, dialogRowWidth } from "../../../src/host/prompt-text.ts";
import { CONTINUED } from "../../../src/text/rows.ts";
import { callerTextOf, fitsEveryMeasure } from "../../helpers/row-measure.ts";

const callerText = callerTextOf();

/** The rows the prompt writes itself (in order), all others must start with the mark. */
function ownRows(lines: string[], marked: string): string[] {
	return lines.filter(l => !l.startsWith(marked));
}

describe("class 1, generated: every row of a prompt fits every screen it reaches and no caller text starts one", () => {
	test("TUI dialog title (omp holds columns − 4) and the headless host's prompt, screens of 20–200 columns", async () => {
		await fc.assert(
			fc.asyncProperty(callerText, callerText, fc.integer({ min: 20, max: 200 }), async (command, client, columns) => {
				const width = dialogRowWidth({ isTTY: true, columns });
				const details = [`Command: ${command}`];
				const caller = { tokenName: "owner", client: `laptop${client}` };
				const call = { tool: "bash", args: { command }, order: ["command"], details, caller, width };
				const title = approvalTitle(`Allow tool: bash\n${details[0]}`, call as never);
				// The first line is the dialog's border title, which omp cuts to fit; the body is the rest.
				const body = title.split("\n").slice(1);
				await fitsEveryMeasure(body, columns - 4);
				const own = ownRows(body, CONTINUED);
				// The host's detail line, `command: ` for an empty command the host line does not show, the label.
				expect(own.length).toBe(command === "" ? 3 : 2);
				expect(own[0]).toStartWith("Command: ");
				const label = body.slice(body.lastIndexOf(own.at(-1) as string)).map(r => r.replace(CONTINUED, ""));
				expect(label.join("")).toStartWith("Remote call (A2A): token owner, client laptop");

				const wire = approvalTitle(`Allow tool: bash\n${details[0]}`, {
					...call,
					width: Number.POSITIVE_INFINITY,
				} as never);
				const screen = formatPrompt({ id: "1", ...parseApprovalTitle(wire) }, 60_000, 0, columns).split("\n");
				await fitsEveryMeasure(screen, columns);
				const headless = ownRows(screen, CONTINUED).filter(l => !l.startsWith(`  ${CONTINUED}`));
				const starts = [
					"",
					"Approval needed",
					"  Command: ",
					...(command === "" ? ["  command: "] : []),
					"Approve? ",
					"[y/N] Deny",
				];
				expect(headless.length).toBe(starts.length);
				for (const [i, start] of starts.entries()) expect(headless[i]).toStartWith(start);
			}),
			{ numRuns: 150 },
		);
	}, 120_000);
});

describe("class 1, the attacks of finding 1 (a)–(d)", () => {
	const title = (command: string, client: string, columns: number) =>
		approvalTitle(`Allow tool: bash\nCommand: ${command}`, {
			tool: "bash",
			args: { command },
			order: ["command"],
			details: [`Command: ${command}`],
			caller: { tokenName: "owner", client },
			width: dialogRowWidth({ isTTY: true, columns }),
		})
			.split("\n")
			.slice(1);

	test("(a) VS16 emoji then ` Command: ls -la`: no row wider than omp measures it, no unmarked `Command: ls`", async () => {
		const body = title(`${"☺\ufe0f".repeat(30)} Command: ls -la; touch x`, "c", 80);
		await fitsEveryMeasure(body, 76);
		expect(body.filter(r => r.startsWith("Command: ls"))).toEqual([]);
	});

	test("(b) a client name padded to put `Command: ls -la` on a row of its own: the label's rows are marked", async () => {
		const body = title("make", `laptop${" ".repeat(40)}Command: ls -la`, 80);
		await fitsEveryMeasure(body, 76);
		expect(body.filter(r => !r.startsWith(CONTINUED)).map(r => r.slice(0, 12))).toEqual([
			"Command: mak",
			"Remote call ",
		]);
	});

	test("(c) a 42-column terminal: plain ASCII rows fit its 38-column dialog", async () => {
		await fitsEveryMeasure(title("x".repeat(300), "c", 42), 38);
	});

	test("(d) whatever the host's width, rows fit a 40-column guest (ROW_MAX + 4); under 20 columns a fixed prompt", async () => {
		for (const columns of [40, 64, 100, 200, 1000])
			await fitsEveryMeasure(title("y".repeat(400), "c".repeat(80), columns), 36);
		const narrow = title("touch /tmp/x", "phone", 19);
		expect(narrow.join("\n")).not.toContain("touch");
		expect(narrow.join("\n")).not.toContain("phone");
		expect(narrow.join("\n")).toContain("too narrow");
	});
});
