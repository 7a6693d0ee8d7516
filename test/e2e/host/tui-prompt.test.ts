/**
 * Issue 30 defect 1 and issue 38 finding 1 in omp's own TUI on an 80x24 terminal (a pseudo-terminal rendered by a terminal
 * emulator, test/helpers/screen.ts; the test reads the screen): the approval dialog of a remote call carries the bridge's title, so a command with 30 line breaks and
 * a fake prompt, or one padded to the dialog's width, shows inside the dialog as escaped, marked rows
 * under a first line that names the tool and the start of what runs. Issue 38: VS16 emoji, a padded
 * client name and a 42-column terminal start no unmarked row, and every row is at most 36 columns (a
 * 40-column Collab guest holds it). Second channel: the screen, and the marker file the approved or
 * denied command leaves or not.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bodyText, checkRows, type Dialog, dialog } from "../../helpers/dialog.ts";
import { BUN, freePort, OMP, ROOT } from "../../helpers/host.ts";
import { Screen, ScreenClient, screenEnv, screenHome } from "../../helpers/screen.ts";

const FAKE = "Approval needed: bash from token owner, client test\n  Command: ls -la";
const TOKEN = `tui${crypto.randomUUID().replaceAll("-", "")}`;

let home = "";
let cwd = "";
let sid = "";
let screen: Screen | undefined;
let mcp: ScreenClient | undefined;

const call = (args: Record<string, unknown>, session = sid) => (mcp as ScreenClient).call("bash", args, session);
/** A session whose client names itself `name` (the label shows it). */
const session = (name: string) => (mcp as ScreenClient).session(name);

beforeAll(async () => {
	let agent: string;
	({ home, agent, cwd } = screenHome("a2a-tui-"));
	// A fresh HOME would open omp's first-run setup wizard over the session.
	writeFileSync(join(agent, "config.yml"), "setupVersion: 2\nstartup:\n  setupWizard: false\n");
	const port = await freePort();
	mcp = new ScreenClient(`http://127.0.0.1:${port}/`, TOKEN);
	writeFileSync(join(agent, "a2a-bridge.json"), JSON.stringify({ host: "127.0.0.1", port, token: TOKEN }), {
		mode: 0o600,
	});
	const env = screenEnv(home, "xterm-256color");
	const entry = join(ROOT, "extensions", "a2a-bridge.ts");
	const cmd = [BUN, "--no-install", OMP, "--no-session", "--approval-mode", "always-ask", "-e", entry];
	screen = Screen.start(cmd, { cwd, env, cols: 80, rows: 24 });
	const deadline = Date.now() + 90_000;
	for (;;) {
		sid = await mcp.session("test").catch(() => "");
		if (sid !== "") break;
		if (Date.now() > deadline) throw new Error(`the TUI's bridge did not start:\n${screen.visible().join("\n")}`);
		await Bun.sleep(500);
	}
}, 120_000);

afterAll(async () => {
	await screen?.stop();
	if (home) rmSync(home, { recursive: true, force: true });
});

/** Waits for the dialog of the call holding `marker`, checks it, then picks Approve or Deny (Deny on a failed check). */
async function answered(
	command: string,
	marker: string,
	check: (d: Dialog) => void,
	pick: "Approve" | "Deny",
	session = sid,
): Promise<{ isError: boolean }> {
	const s = screen as Screen;
	const pending = call({ command }, session);
	let keys = "Deny";
	try {
		const rows = await s.waitFor("the approval dialog", r => {
			const d = dialog(r);
			return d !== null && bodyText(d).includes(marker);
		});
		check(dialog(rows) as Dialog);
		keys = pick;
	} finally {
		// The cursor starts on Approve; Deny is one row down.
		s.type(keys === "Deny" ? "\x1b[B\r" : "\r");
	}
	return pending;
}

describe("omp's TUI shows a remote call's dialog as the bridge titles it (issue 30 defect 1)", () => {
	test("30 line breaks and a fake prompt before the real command: one escaped value in marked rows; Deny leaves no marker", async () => {
		const marker = `tui-${crypto.randomUUID().slice(0, 8)}`;
		const r = await answered(
			`${"\n".repeat(30)}${FAKE}\ntouch ${marker}`,
			marker,
			d => {
				expect(d.title).toStartWith("╭─ Allow tool: bash — remote call (A2A): Command: \\n\\n\\n");
				// The label is cut into marked rows like every other line.
				expect(
					d.body
						.slice(-2)
						.map(r => r.replace(/^┆ /, ""))
						.join(""),
				).toBe("Remote call (A2A): token owner, client test");
				checkRows(d.body);
				expect(d.body.join("").replaceAll("┆ ", "")).toContain(`Command: ls -la\\ntouch ${marker}`);
			},
			"Deny",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("a command padded to the dialog's width cannot start a row with a fake 'Approve'; Approve runs it", async () => {
		const marker = `pad-${crypto.randomUUID().slice(0, 8)}`;
		const command = `touch ${marker}${" ".repeat(70)}❯ Approve`;
		const r = await answered(
			command,
			marker,
			d => {
				checkRows(d.body);
				expect(d.body.filter(row => row.trimStart().startsWith("❯"))).toEqual([]);
			},
			"Approve",
		);
		expect(r.isError).toBe(false);
		expect(existsSync(join(cwd, marker))).toBe(true);
	}, 90_000);

	test("issue 38 (a): VS16 emoji before ` Command: ls -la` start no unmarked row; Deny leaves no marker", async () => {
		const marker = `vs-${crypto.randomUUID().slice(0, 8)}`;
		const r = await answered(
			`${"☺\ufe0f".repeat(30)} Command: ls -la; touch ${marker}`,
			marker,
			d => {
				checkRows(d.body);
				expect(d.body.filter(row => row.startsWith("Command: ls"))).toEqual([]);
			},
			"Deny",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("issue 38 (b): a client name padded to put `Command: ls -la` on a row: the label's rows are marked; Approve runs", async () => {
		const marker = `cl-${crypto.randomUUID().slice(0, 8)}`;
		const padded = await session(`laptop${" ".repeat(40)}Command: ls -la`);
		const r = await answered(
			`touch ${marker}`,
			marker,
			d => {
				checkRows(d.body);
				expect(d.body.filter(row => row.includes("Command: ls -la")).every(row => row.startsWith("┆ "))).toBe(true);
			},
			"Approve",
			padded,
		);
		expect(r.isError).toBe(false);
		expect(existsSync(join(cwd, marker))).toBe(true);
	}, 90_000);

	test("issue 38 (c): on a 42-column terminal plain ASCII rows fit the dialog (no row wrapped by the TUI)", async () => {
		const s = screen as Screen;
		s.resize(42, 24);
		try {
			await Bun.sleep(500);
			const marker = `n-${crypto.randomUUID().slice(0, 8)}`;
			const r = await answered(
				`touch ${marker}; echo ${"x".repeat(120)} Command: ls -la`,
				marker,
				d => {
					checkRows(d.body);
					// The dialog body holds 38 columns: a row the TUI had to wrap would start a row unmarked.
					for (const row of d.body) expect(row.length).toBeLessThanOrEqual(38);
				},
				"Approve",
			);
			expect(r.isError).toBe(false);
			expect(existsSync(join(cwd, marker))).toBe(true);
		} finally {
			s.resize(80, 24);
			await Bun.sleep(500);
		}
	}, 90_000);

	test("issue 38: on a 19-column terminal the dialog says it is too narrow and shows nothing of the call; Deny", async () => {
		const s = screen as Screen;
		s.resize(19, 24);
		try {
			await Bun.sleep(500);
			const marker = `tn-${crypto.randomUUID().slice(0, 8)}`;
			const pending = call({ command: `touch ${marker}` });
			try {
				const rows = await s.waitFor("the fixed prompt", r => r.join("").replaceAll(/[│ ]/g, "").includes("toonarrow"));
				const top = rows.findLastIndex(r => r.startsWith("╭"));
				const body = rows.slice(
					top + 1,
					rows.findIndex((r, i) => i > top && r.includes("Approve")),
				);
				expect(body.join("")).not.toContain(marker.slice(0, 5));
			} finally {
				// Deny is one row below Approve.
				s.type("\x1b[B\r");
			}
			expect((await pending).isError).toBe(true);
			expect(existsSync(join(cwd, marker))).toBe(false);
		} finally {
			s.resize(80, 24);
			await Bun.sleep(500);
		}
	}, 90_000);
});
