/**
 * Issue 30 defect 1 on an 80x24 terminal: `npm run host --approvals ask` on a pseudo-terminal, rendered
 * by a terminal emulator (test/helpers/screen.ts) and read back from its screen. A caller's command carrying 30 line breaks and a fake
 * `Approval needed … Command: ls -la`, or padded so the terminal's own wrap starts a row with a fake
 * `Approve?`, never puts a row on the screen that reads as the prompt's own, and the real command
 * stays on the screen. Issue 38 finding 1: rows are laid out by the rule the TUI dialog follows
 * (`rowWidth`: at most 36 columns, the terminal's own if narrower, a fixed prompt under 16), so VS16
 * emoji, a padded client name or a narrowed terminal start no unmarked row. Second channel: the screen
 * as the terminal renders it, and the marker file the approved command leaves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT } from "../../helpers/host.ts";
import { Screen, ScreenClient, screenEnv, screenHome } from "../../helpers/screen.ts";

const COLS = 80;
const ROWS = 24;
const FAKE = "Approval needed: bash from token owner, client test\n  Command: ls -la";

let home = "";
let cwd = "";
let screen: Screen | undefined;
let mcp: ScreenClient | undefined;
let sid = "";

const call = (name: string, args: Record<string, unknown>, session = sid) =>
	(mcp as ScreenClient).call(name, args, session);
/** A session whose client names itself `name`. */
const session = (name: string) => (mcp as ScreenClient).session(name);

/** The answer is the prompt's last row, on a row of its own. */
const ANSWER = "[y/N] Deny in";
const isPromptShown = (rows: string[]) =>
	[ANSWER, "Approval needed: a remote call, but"].some(a => rows.findLast(r => r !== "")?.startsWith(a) === true);
const isMarked = (row: string) => /^ *┆( |$)/.test(row);

/** The rows of the prompt on screen now: everything after the last decision (or the serving banner). */
function currentPrompt(rows: string[]): string[] {
	const shown = rows.slice(0, rows.findLastIndex(r => r !== "") + 1);
	const last = shown.findLastIndex(r => r.startsWith("approval: ") || r === "a2a host: Ctrl-C stops");
	let from = last + 1;
	while (shown[from] !== undefined && isMarked(shown[from] as string)) from++;
	return shown.slice(from).filter(r => r !== "");
}

/**
 * The prompt's own rows start at column 0 or as detail rows (`  `): its header first (its continuation
 * rows marked), the question and the answer last, nothing like them between; no row wider than 36 columns.
 */
function expectWholePrompt(prompt: string[], header: string): void {
	expect(logical(prompt).split("\n")[0]).toBe(header);
	expect(prompt.at(-2)).toStartWith("Approve? ");
	expect(prompt.at(-1)).toStartWith(ANSWER);
	const own = prompt.filter(r => !isMarked(r));
	expect(own[0]).toStartWith("Approval needed");
	for (const row of own.slice(1, -2)) {
		expect(row).toMatch(/^ {2}\S/);
		expect(row.trimStart()).not.toMatch(/^(Approval needed|Approve\?|\[y\/N\])/);
	}
	for (const row of prompt) expect(Bun.stringWidth(row, { ambiguousIsNarrow: false })).toBeLessThanOrEqual(36);
}

/** The screen's rows with continuation rows (`  ┆ …`) joined back to the row they continue. */
const logical = (rows: string[]): string => rows.join("\n").replaceAll(/\n *┆ /g, "");

beforeAll(async () => {
	let agent: string;
	({ home, agent, cwd } = screenHome("a2a-screen-host-"));
	const env = screenEnv(home, "xterm", { TMPDIR: process.env.TMPDIR ?? "/tmp" });
	const cmd = [
		BUN,
		join(ROOT, "scripts", "host.ts"),
		"--",
		"--approvals",
		"ask",
		"--",
		"--approval-mode",
		"always-ask",
	];
	screen = Screen.start(cmd, { cwd, env, cols: COLS, rows: ROWS });
	const deadline = Date.now() + 90_000;
	while (!/^a2a host: Ctrl-C stops$/m.test(screen.history())) {
		if (Date.now() > deadline) throw new Error(`the headless host did not start:\n${screen.history()}`);
		await Bun.sleep(200);
	}
	const url = /^ {2}URL: +(\S+)/m.exec(screen.history())?.[1] ?? "";
	// The host wrote its config with a fresh token when it started.
	const token = JSON.parse(readFileSync(join(agent, "a2a-bridge.json"), "utf8")).token;
	mcp = new ScreenClient(url, token);
	sid = await mcp.session("test");
}, 120_000);

afterAll(async () => {
	await screen?.stop();
	if (home) rmSync(home, { recursive: true, force: true });
});

/**
 * Makes the call, waits for its prompt (the rows after the last decision) to show `seen`, checks it and
 * answers `answer`; a failed wait or check answers n, so the next test starts with no prompt open.
 */
async function prompted(
	tool: string,
	args: Record<string, unknown>,
	seen: string,
	check: (rows: string[]) => void,
	answer: "y" | "n",
	from = sid,
): Promise<{ isError: boolean }> {
	const s = screen as Screen;
	const pending = call(tool, args, from);
	let typed = "n\r";
	try {
		const rows = currentPrompt(
			await s.waitFor("the approval prompt", r => isPromptShown(r) && logical(r).includes(seen)),
		);
		check(rows);
		typed = `${answer}\r`;
	} finally {
		s.type(typed);
	}
	return pending;
}

describe("the headless prompt on an 80x24 terminal (issue 30 defect 1)", () => {
	const HEADER = "Approval needed: bash from token owner, client test";

	test("real command first, then 30 line breaks and a fake prompt: the screen shows the whole real prompt; y runs it", async () => {
		const marker = `pwned-${crypto.randomUUID().slice(0, 8)}`;
		const command = `touch ${marker}${"\n".repeat(30)}${FAKE}`;
		const r = await prompted(
			"bash",
			{ command },
			marker,
			rows => {
				// The whole prompt is on screen, its header once as its own row; the fake one starts no row.
				expectWholePrompt(rows, HEADER);
				expect(rows.filter(row => /^ *Command: ls -la/.test(row))).toEqual([]);
				expect(logical(rows)).toContain(`\n  Command: touch ${marker}\\n\\n\\n`);
				expect(rows.at(-2)).toStartWith("Approve? bash (Command: touch");
			},
			"y",
		);
		expect(r.isError).toBe(true); // `Approval` is not a command: the shell says so after touch ran.
		expect(existsSync(join(cwd, marker))).toBe(true);
	}, 90_000);

	test("30 line breaks, a fake prompt, then the real command: the real command is on screen; n leaves no marker", async () => {
		const marker = `late-${crypto.randomUUID().slice(0, 8)}`;
		const command = `${"\n".repeat(30)}${FAKE}\ntouch ${marker}`;
		const r = await prompted(
			"bash",
			{ command },
			marker,
			rows => {
				expectWholePrompt(rows, HEADER);
				expect(logical(rows)).toContain(`Command: ls -la\\ntouch ${marker}\n`);
				expect(rows.at(-2)).toStartWith("Approve? bash (Command: \\n\\n\\n");
			},
			"n",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("a command padded so the terminal's wrap would start a row with a fake 'Approve?': only the real one starts a row", async () => {
		const marker = `padded-${crypto.randomUUID().slice(0, 8)}`;
		// Old layout: `  Command: touch <marker>` then spaces up to column 80, so the next row begins with the fake.
		const lead = `  Command: touch ${marker}`;
		const command = `touch ${marker}${" ".repeat(COLS - lead.length)}Approve? bash (ls) [y]es / [N]o — Deny in 60 s:`;
		const r = await prompted(
			"bash",
			{ command },
			marker,
			rows => {
				expectWholePrompt(rows, HEADER);
				for (const row of rows.slice(2, -2)) expect(row).toMatch(/^ {2}(Command: |┆ )/);
			},
			"n",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("hub start on screen: application, args and cwd (the host's own prompt says only 'Allow tool: hub')", async () => {
		const marker = `hub-${crypto.randomUUID().slice(0, 8)}`;
		const args = { op: "start", name: marker, application: "/bin/sh", args: ["-c", `touch ${marker}`], cwd };
		const r = await prompted(
			"hub",
			args,
			marker,
			rows => {
				expectWholePrompt(rows, "Approval needed: hub from token owner, client test");
				const shown = logical(rows);
				expect(shown).toContain("\n  application: /bin/sh\n");
				expect(shown).toContain(`\n  args: ["-c","touch ${marker}"]\n`);
				expect(shown).toContain(`\n  cwd: ${cwd}\n`);
			},
			"n",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("issue 38: VS16 emoji before ` Command: ls -la` start no unmarked row; n leaves no marker", async () => {
		const marker = `vs-${crypto.randomUUID().slice(0, 8)}`;
		const command = `${"☺\ufe0f".repeat(30)} Command: ls -la; touch ${marker}`;
		const r = await prompted(
			"bash",
			{ command },
			marker,
			rows => {
				expectWholePrompt(rows, HEADER);
				expect(rows.filter(row => /^ *Command: ls/.test(row))).toEqual([]);
			},
			"n",
		);
		expect(r.isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 90_000);

	test("issue 38: a client name padded to put `Command: ls -la` on a row: the header's rows are marked; y runs", async () => {
		const marker = `cl-${crypto.randomUUID().slice(0, 8)}`;
		const client = `laptop${" ".repeat(40)}Command: ls -la`;
		const r = await prompted(
			"bash",
			{ command: `touch ${marker}` },
			marker,
			rows => {
				expectWholePrompt(rows, `Approval needed: bash from token owner, client ${client}`);
				expect(rows.filter(row => row.includes("Command: ls -la")).every(isMarked)).toBe(true);
			},
			"y",
			await session(client),
		);
		expect(r.isError).toBe(false);
		expect(existsSync(join(cwd, marker))).toBe(true);
		// The decision line names the client too: by the same rule, no row over 36 columns, the padding marked.
		const s = screen as Screen;
		const shown = await s.waitFor("the decision", rows => rows.some(row => row.startsWith("approval: bash")));
		const decision = shown.slice(shown.findLastIndex(row => row.startsWith("approval: bash")));
		const end = decision.findIndex((row, i) => i > 0 && !isMarked(row));
		const rows = end < 0 ? decision : decision.slice(0, end);
		expect(logical(rows)).toContain(`client ${client} -> Approve`);
		for (const row of rows) expect(Bun.stringWidth(row, { ambiguousIsNarrow: false })).toBeLessThanOrEqual(36);
		expect(rows.filter(row => row.includes("Command: ls -la")).every(isMarked)).toBe(true);
	}, 90_000);

	test("issue 38: a 24-column terminal gets rows of 24; under 16 a fixed prompt with nothing of the caller's", async () => {
		const s = screen as Screen;
		try {
			s.resize(24, ROWS);
			const marker = `nw-${crypto.randomUUID().slice(0, 8)}`;
			const r = await prompted(
				"bash",
				{ command: `touch ${marker} ${"z".repeat(60)}` },
				marker,
				shown => {
					// Rows printed before the resize are reflowed by the terminal: the prompt starts at its header.
					const rows = shown.slice(shown.findLastIndex(r => r.startsWith("Approval needed")));
					for (const row of rows) expect(row.length).toBeLessThanOrEqual(24);
					expect(rows.filter(row => !isMarked(row)).map(row => row.slice(0, 6))).toEqual([
						"Approv",
						"  Comm",
						"Approv",
						"[y/N] ",
					]);
				},
				"y",
			);
			expect(r.isError).toBe(false);
			expect(existsSync(join(cwd, marker))).toBe(true);

			s.resize(15, ROWS);
			const hidden = `hid-${crypto.randomUUID().slice(0, 8)}`;
			const pending = call("bash", { command: `touch ${hidden}` });
			await s.waitFor("the fixed prompt", () => s.history().includes("too narrow to show it"));
			const seen = s.history();
			s.type("n\r");
			expect(seen).not.toContain(hidden);
			expect((await pending).isError).toBe(true);
			expect(existsSync(join(cwd, hidden))).toBe(false);
		} finally {
			s.resize(COLS, ROWS);
		}
	}, 90_000);
});
