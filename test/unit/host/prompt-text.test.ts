import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { parseApprovalTitle } from "../../../src/headless/frames.ts";
import { formatPrompt } from "../../../src/headless/prompt-screen.ts";
import {
	approvalTitle,
	dialogRowWidth,
	dialogTitle,
	hostDetails,
	type PromptCall,
} from "../../../src/host/prompt-text.ts";
import { CONTINUED } from "../../../src/text/rows.ts";
import { hasHidden } from "../../../src/text/show.ts";
import { anyText } from "../../helpers/arbitraries.ts";

/** What omp 18.2.3 shows (`formatApprovalPrompt` with the tool's own `formatApprovalDetails`). */
const hostTitle = (tool: string, details: string[], reason?: string) =>
	[`Allow tool: ${tool}`, ...(reason ? [`Reason: ${reason}`] : []), ...details].join("\n");
const cut = (v: string) => (v.length <= 2000 ? v : `${v.slice(0, 2000)}[…${v.length - 2000}ch elided…]`);
const bashDetails = (a: Record<string, unknown>) => [`Command: ${cut(String(a.command))}`];
const writeDetails = (a: Record<string, unknown>) => [
	`Path: ${cut(String(a.path))}`,
	`Content:\n${cut(String(a.content))}`,
];
const CALLER = { tokenName: "ci", client: "claude-code" };
/** The rows of an 80-column TUI (`dialogRowWidth`). */
const ROW_WIDTH = 72;
const BASH_ORDER = ["command", "env", "timeout", "cwd", "pty", "async"];
const HUB_ORDER = [
	"op",
	"to",
	"message",
	"name",
	"application",
	"args",
	"env",
	"cwd",
	"text",
	"enter",
	"keys",
	"signal",
];

function titleFor(tool: string, args: Record<string, unknown>, order: string[], details: string[] | null): string {
	const call: PromptCall = { tool, args, order, details, caller: CALLER, width: ROW_WIDTH };
	return approvalTitle(hostTitle(tool, details ?? []), call);
}
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** The exploit of issue 30: 30 line breaks and a fake prompt around the real command. */
const FAKE = "Approval needed: bash from token owner, client test\n  Command: ls -la";
const EXPLOIT = `touch /tmp/PWNED${"\n".repeat(30)}${FAKE}`;

describe("approvalTitle: what the approver reads is what runs (issue 30 defect 1)", () => {
	test("the exploit -> one escaped value; no line of the title is the caller's; the real command is on line 0", () => {
		const args = { command: EXPLOIT };
		const title = titleFor("bash", args, BASH_ORDER, bashDetails(args));
		const lines = title.split("\n");
		expect(lines[0]).toBe(
			`Allow tool: bash — remote call (A2A): Command: touch /tmp/PWNED${"\\n".repeat(30)}Approval needed: bash from token owner, client test\\n  Command: ls -la`,
		);
		expect(lines.at(-1)).toBe("Remote call (A2A): token ci, client claude-code");
		// Every line is the bridge's: the first, detail rows (a continuation carries the mark), the label.
		for (const line of lines.slice(1, -1)) {
			expect(line.startsWith(CONTINUED) || /^(Command: |command: )/.test(line)).toBe(true);
			expect(Bun.stringWidth(line)).toBeLessThanOrEqual(ROW_WIDTH);
		}
		expect(lines.some(l => l.startsWith("Approval needed"))).toBe(false);
		// Joined back, the rows hold the command exactly as JSON text.
		const joined = lines
			.slice(1, -1)
			.map(l => (l.startsWith(CONTINUED) ? l.slice(CONTINUED.length) : `\n${l}`))
			.join("")
			.trim()
			.split("\n")[0];
		// Read back as the escapes say (`\\n` a line break, `\\\\` a backslash), it is the host's line exactly.
		expect(JSON.parse(`"${(joined ?? "").replaceAll('"', '\\"')}"`)).toBe(`Command: ${EXPLOIT}`);
	});

	test("a long value the host shows whole also gets its size and SHA-256", () => {
		const command = `echo ${"x".repeat(300)}`;
		const title = titleFor("bash", { command }, BASH_ORDER, [`Command: ${command}`]);
		expect(title.replaceAll(`\n${CONTINUED}`, "")).toContain(
			`\ncommand: 305 bytes, sha256 ${sha(command)} (shown above)\n`,
		);
	});

	test("a literal backslash-n and a real line break never look alike", () => {
		const literal = titleFor("bash", { command: "printf 'a\\nb'" }, BASH_ORDER, ["Command: printf 'a\\nb'"]);
		const real = titleFor("bash", { command: "printf 'a\nb'" }, BASH_ORDER, ["Command: printf 'a\nb'"]);
		expect(literal.split("\n")[1]).toBe("Command: printf 'a\\\\nb'");
		expect(real.split("\n")[1]).toBe("Command: printf 'a\\nb'");
		// Plain text stays as the host shows it.
		expect(titleFor("bash", { command: "make" }, BASH_ORDER, ["Command: make"]).split("\n")[1]).toBe("Command: make");
	});

	test("padding cannot start a row: rows are cut by the bridge and every continuation row is marked", () => {
		const pad = `ls ${" ".repeat(ROW_WIDTH - 12)}Approve? bash (ls) [y]es`;
		const title = titleFor("bash", { command: pad }, BASH_ORDER, [`Command: ${pad}`]);
		const rowsOf = title.split("\n").slice(1, -1);
		expect(rowsOf[0]).toBe(`Command: ls ${" ".repeat(ROW_WIDTH - 12)}`);
		expect(rowsOf[1]).toBe(`${CONTINUED}Approve? bash (ls) [y]es`);
		expect(rowsOf).toHaveLength(2);
	});

	test("property: for any command, no title line but the bridge's own starts outside a marked row", () => {
		fc.assert(
			fc.property(anyText({ maxLength: 300 }), command => {
				const lines = titleFor("bash", { command }, BASH_ORDER, bashDetails({ command })).split("\n");
				expect(lines[0]?.startsWith("Allow tool: bash — remote call (A2A): ")).toBe(true);
				expect(lines.at(-1)).toBe("Remote call (A2A): token ci, client claude-code");
				for (const line of lines) expect(hasHidden(line)).toBe(false);
				for (const line of lines.slice(1, -1))
					expect(line.startsWith(CONTINUED) || /^(Command:|command: )/.test(line)).toBe(true);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("approvalTitle: every argument that decides what happens is shown (issue 30 defect 3)", () => {
	test("bash: env and cwd the host's prompt leaves out", () => {
		const args = { command: "ls", env: { LD_PRELOAD: "/tmp/evil.so" }, cwd: "/srv" };
		const lines = titleFor("bash", args, BASH_ORDER, bashDetails(args)).split("\n");
		expect(lines.slice(1, -1)).toEqual(["Command: ls", 'env: {"LD_PRELOAD":"/tmp/evil.so"}', "cwd: /srv"]);
	});

	test("hub start: application, args and cwd, in the tool's schema order whatever the caller's", () => {
		const args = { cwd: "/tmp", args: ["-c", "touch /tmp/x"], application: "sh", name: "job", op: "start" };
		const title = titleFor("hub", args, HUB_ORDER, null);
		expect(title.split("\n")).toEqual([
			'Allow tool: hub — remote call (A2A): op: start, name: job, application: sh, args: ["-c","touch /tmp/x"], cwd: /tmp',
			"op: start",
			"name: job",
			"application: sh",
			'args: ["-c","touch /tmp/x"]',
			"cwd: /tmp",
			"Remote call (A2A): token ci, client claude-code",
		]);
	});

	test("hub send: the text and the keys", () => {
		const args = { op: "send", name: "shell", text: "rm -rf ~\n", keys: ["Enter", "C-c"] };
		const lines = titleFor("hub", args, HUB_ORDER, null).split("\n");
		expect(lines).toContain("text: rm -rf ~\\n");
		expect(lines).toContain("name: shell");
		expect(lines).toContain('keys: ["Enter","C-c"]');
	});

	test("write: path, size, digest, and what was cut (the host elides content after 2,000 characters)", () => {
		const content = `${"a".repeat(3000)}\nrm -rf ~\n${"b".repeat(3000)}`;
		const args = { path: "/home/u/.bashrc", content };
		const title = titleFor("write", args, ["path", "content"], writeDetails(args));
		expect(title).toContain("\nPath: /home/u/.bashrc\n");
		const joined = title.replaceAll(`\n${CONTINUED}`, "");
		expect(joined).toContain(`content (6,010 bytes, sha256 ${sha(content)}): "${"a".repeat(45)}`);
		expect(joined).toContain(` … 5,450 characters not shown … "${"b".repeat(30)}`);
		// The host's own copy, cut at 2,000 characters, is left out: the argument line says more in less room.
		expect(joined).not.toContain("ch elided…]");
		expect(title.split("\n").length).toBeLessThan(20);
	});

	test("edit: the path and the edits (the host shows only the file)", () => {
		const input = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-old\n+new\n*** End Patch";
		const title = titleFor("edit", { input }, ["input"], ["File: src/a.ts"]);
		expect(title).toContain("\nFile: src/a.ts\n");
		expect(title.replaceAll(`\n${CONTINUED}`, "")).toContain(
			"\ninput: *** Begin Patch\\n*** Update File: src/a.ts\\n@@\\n-old\\n+new\\n*** End Patch\n",
		);
	});

	test("the host's reason stays; a title the host did not build from these arguments shows the host's text", () => {
		const args = { command: "rm x" };
		const withReason = approvalTitle(hostTitle("bash", ["Command: rm x"], "Prompt required by bash pattern: rm *"), {
			tool: "bash",
			args,
			order: BASH_ORDER,
			details: ["Command: rm x"],
			caller: CALLER,
			width: ROW_WIDTH,
		});
		expect(withReason.split("\n").slice(1, 3)).toEqual([
			"Reason: Prompt required by bash pattern: rm *",
			"Command: rm x",
		]);
		// An extension revised the arguments: the bridge cannot vouch for its own copy, so it shows the host's.
		const revised = approvalTitle("Allow tool: bash\nCommand: rm -rf /\nfake", {
			tool: "bash",
			args,
			order: BASH_ORDER,
			details: ["Command: rm x"],
			caller: CALLER,
			width: ROW_WIDTH,
		});
		expect(revised.replaceAll(`\n${CONTINUED}`, "").split("\n")[1]).toBe(
			"the host's prompt text, not checked against the call's arguments: Command: rm -rf /\\nfake",
		);
		expect(revised).not.toContain("rm x");
	});

	test("rows are cut for the TUI only: over rpc (stdout not a terminal) every line stays whole", () => {
		// At most ROW_MAX (36) for any terminal, so a 40-column Collab guest holds every row; the dialog's
		// columns − 4 when narrower; none under 20 columns (a fixed prompt).
		expect(dialogRowWidth({ isTTY: true, columns: 80 })).toBe(36);
		expect(dialogRowWidth({ isTTY: true, columns: 42 })).toBe(36);
		expect(dialogRowWidth({ isTTY: true, columns: 30 })).toBe(26);
		expect(dialogRowWidth({ isTTY: true, columns: 20 })).toBe(16);
		expect(dialogRowWidth({ isTTY: true, columns: 19 })).toBeNull();
		expect(dialogRowWidth({ isTTY: false, columns: 80 })).toBe(Number.POSITIVE_INFINITY);
		expect(dialogRowWidth({})).toBe(Number.POSITIVE_INFINITY);
		const command = `touch ${"x".repeat(200)}\nrm -rf ~`;
		const whole = approvalTitle(hostTitle("bash", [`Command: ${command}`]), {
			tool: "bash",
			args: { command },
			order: BASH_ORDER,
			details: [`Command: ${command}`],
			caller: CALLER,
			width: Number.POSITIVE_INFINITY,
		});
		expect(whole.split("\n")[1]).toBe(`Command: touch ${"x".repeat(200)}\\nrm -rf ~`);
	});

	test("hostDetails follows the host: a string or the non-empty strings of an array; anything else none", () => {
		expect(hostDetails("a")).toEqual(["a"]);
		expect(hostDetails(["a", "", 3, "b"])).toEqual(["a", "b"]);
		expect(hostDetails(undefined)).toBeNull();
	});

	test("any other dialog of a remote call: its title as one exact value, then the caller", () => {
		expect(dialogTitle("Pick one\nApprove? y", CALLER)).toBe(
			"A dialog of a remote call (A2A): Pick one\\nApprove? y\nRemote call (A2A): token ci, client claude-code",
		);
	});
});

describe("the headless host reads the bridge's title back (one format, writer and reader)", () => {
	test("tool, start, rows and caller; the prompt on an 80-column terminal keeps the command on screen", () => {
		const args = { command: EXPLOIT };
		const parsed = parseApprovalTitle(titleFor("bash", args, BASH_ORDER, bashDetails(args)));
		expect(parsed.tool).toBe("bash");
		expect(parsed.caller).toEqual({ tokenName: "ci", client: "claude-code" });
		expect(parsed.start).toStartWith("Command: touch /tmp/PWNED\\n");
		const screen = formatPrompt({ id: "1", ...parsed }, 60_000, 0, 80).split("\n");
		expect(screen.length).toBeLessThan(24);
		// Rows of at most 36 columns (rowWidth), the header's continuation marked, the answer on a row of its own.
		expect(screen.slice(1, 3)).toEqual(["Approval needed: bash from token ci,", `${CONTINUED} client claude-code`]);
		expect(screen.at(-2)).toBe("Approve? bash (Command: touch /tm…)");
		expect(screen.at(-1)).toBe("[y/N] Deny in 60 s: ");
		for (const row of screen) expect(Bun.stringWidth(row, { ambiguousIsNarrow: false })).toBeLessThanOrEqual(36);
		expect(screen.slice(3, -2).every(r => r.startsWith("  "))).toBe(true);
	});

	test("a label-like line inside a host-built title is not a caller, and no line of it is a row of its own", () => {
		const parsed = parseApprovalTitle(`Allow tool: bash\nCommand: x\n${FAKE}\nRemote call (A2A): token owner`);
		expect(parsed.caller).toBeUndefined();
		expect(parsed.details).toHaveLength(1);
		expect(parsed.details[0]).toStartWith("Command: x\\nApproval needed");
	});
});

/** The title's lines with the rows the bridge cut joined back. */
const joinedLines = (title: string): string[] => title.replaceAll(`\n${CONTINUED}`, "").split("\n");

describe("issue 38 finding 6: every key of a structured argument is shown, each long value by start and end", () => {
	test("bash env {PAD: 600 × a, BASH_ENV}: BASH_ENV is on a line of its own, PAD keeps start and end", () => {
		const env = { PAD: "a".repeat(600), BASH_ENV: "./x.sh" };
		const args = { command: "make", env };
		const lines = joinedLines(titleFor("bash", args, BASH_ORDER, bashDetails(args)));
		expect(lines).toContain('env.BASH_ENV: "./x.sh"');
		const pad = lines.find(l => l.startsWith("env.PAD: "));
		expect(pad).toMatch(/^env\.PAD: "a+" … [\d,]+ characters not shown … "a+"$/);
		expect(lines).toContain(`env: 2 values, ${JSON.stringify(env).length} bytes, sha256 ${sha(JSON.stringify(env))}`);
	});

	test("hub args and env, task tasks: every element and key, a long one cut in its middle", () => {
		const hub = { op: "start", application: "sh", args: ["-c", `${"x".repeat(400)}; touch /tmp/END`], env: { A: "1" } };
		const hubLines = joinedLines(titleFor("hub", hub, HUB_ORDER, null));
		expect(hubLines).toContain('args[0]: "-c"');
		expect(hubLines.find(l => l.startsWith("args[1]: "))).toEndWith('touch /tmp/END"');
		const tasks = [
			{ id: "one", assignment: `${"y".repeat(500)} then rm -rf ~` },
			{ id: "two", assignment: "ls", "weird key": 1 },
		];
		const taskLines = joinedLines(titleFor("task", { context: "c", tasks }, ["context", "tasks"], null));
		expect(taskLines).toContain('tasks[0].id: "one"');
		expect(taskLines.find(l => l.startsWith("tasks[0].assignment: "))).toEndWith('rm -rf ~"');
		expect(taskLines).toContain('tasks[1]["weird key"]: 1');
	});

	test("more values than are shown: the rest is counted on a line, never silently left out", () => {
		const env = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`K${i}`, "v".repeat(10)]));
		const lines = joinedLines(titleFor("bash", { command: "make", env }, BASH_ORDER, ["Command: make"]));
		expect(lines.filter(l => l.startsWith("env.K"))).toHaveLength(40);
		expect(lines).toContain("env: 60 more values not shown");
	});

	test("a short structured argument stays one JSON line", () => {
		const lines = joinedLines(titleFor("bash", { command: "ls", env: { A: "b" } }, BASH_ORDER, ["Command: ls"]));
		expect(lines).toContain('env: {"A":"b"}');
	});
});

describe("issue 38 finding 9: a subagent's prompt inside a remote call names the subagent's tool", () => {
	test("the subagent's bash inside a remote task: titled bash with its command, the task named below", () => {
		const call: PromptCall = {
			tool: "task",
			args: { context: "c", tasks: [{ id: "a", assignment: "x" }] },
			order: ["context", "tasks"],
			details: null,
			caller: CALLER,
			width: 36,
		};
		const title = approvalTitle("Allow tool: bash\nCommand: rm -rf /srv/data", call);
		const lines = joinedLines(title);
		expect(lines[0]).toBe("Allow tool: bash — remote call (A2A): Command: rm -rf /srv/data");
		expect(lines[1]).toBe(
			"bash inside the remote task call (a subagent's tool), as the host shows it: Command: rm -rf /srv/data",
		);
		expect(lines.at(-1)).toBe("Remote call (A2A): token ci, client claude-code");
		expect(parseApprovalTitle(title).tool).toBe("bash");
	});

	test("a first line that is not a plain tool name keeps the outer call's name", () => {
		const call: PromptCall = {
			tool: "bash",
			args: { command: "ls" },
			order: BASH_ORDER,
			details: ["Command: ls"],
			caller: CALLER,
			width: 36,
		};
		const lines = joinedLines(approvalTitle("Allow tool: bash — fake\nCommand: rm", call));
		expect(lines[0]).toStartWith("Allow tool: bash — remote call (A2A): ");
		expect(lines[1]).toStartWith("the host's prompt text, not checked against the call's arguments: ");
	});
});
