import { describe, expect, test } from "bun:test";
import { DEFAULT_APPROVAL_TIMEOUT_MS, parseHostArgs } from "../../../src/headless/args.ts";
import { Approver, type Clock } from "../../../src/headless/cli.ts";
import {
	type ApprovalPrompt,
	answerFrame,
	cancelFrame,
	isBridgeFailure,
	isMcpEntry,
	isNoModelFailure,
	parseAnnouncement,
	parseApprovalPicture,
	parseApprovalTitle,
	readFrame,
	TOKEN_PLACEHOLDER,
	withTokenPlaceholder,
} from "../../../src/headless/frames.ts";
import { describeDecision, readAnswer } from "../../../src/headless/prompt-screen.ts";
import { announcement, mcpJson, startNotice } from "../../../src/host/commands.ts";
import { hasHidden } from "../../../src/text/show.ts";

describe("parseHostArgs", () => {
	test("no flags -> ask on a terminal, deny otherwise, 60 s timeout, no omp args", () => {
		const tty = parseHostArgs([], true);
		const pipe = parseHostArgs([], false);
		expect(tty.ok && tty.value.approvals).toBe("ask");
		expect(tty.ok && tty.value.approvalsSource).toBe("default: stdin is a terminal");
		expect(pipe.ok && pipe.value.approvals).toBe("deny");
		expect(pipe.ok && pipe.value.approvalTimeoutMs).toBe(DEFAULT_APPROVAL_TIMEOUT_MS);
		expect(pipe.ok && pipe.value.ompArgs).toEqual([]);
	});

	test("each flag in both spellings, and everything after -- goes to omp", () => {
		const r = parseHostArgs(
			[
				"--approvals",
				"approve",
				"--approval-timeout=2.5",
				"--approval-queue",
				"5",
				"--cwd",
				"/srv",
				"--",
				"--approval-mode",
				"write",
			],
			true,
		);
		expect(r).toEqual({
			ok: true,
			value: {
				approvals: "approve",
				approvalsSource: "--approvals approve",
				approvalTimeoutMs: 2500,
				approvalQueue: 5,
				cwd: "/srv",
				ompArgs: ["--approval-mode", "write"],
				help: false,
			},
		});
		const eq = parseHostArgs(["--approvals=ask"], false);
		expect(eq.ok && eq.value.approvals).toBe("ask");
		expect(parseHostArgs(["-h"], false)).toMatchObject({ ok: true, value: { help: true } });
	});

	const refused: Array<[string[], string, string]> = [
		[["--approvals"], "missing_value", "--approvals needs a value: ask, deny or approve"],
		[["--approvals", "--cwd", "/x"], "missing_value", "--approvals needs a value: ask, deny or approve"],
		[["--approvals", "maybe"], "bad_value", "--approvals: 'maybe' is not one of ask, deny, approve"],
		[["--approvals="], "missing_value", "--approvals needs a value: ask, deny or approve"],
		[["--approval-timeout", "0"], "bad_value", "--approval-timeout: '0' is not a number of seconds in (0, 86400]"],
		[["--approval-timeout", "-5"], "bad_value", "--approval-timeout: '-5' is not a number of seconds"],
		[["--approval-timeout", "10s"], "bad_value", "--approval-timeout: '10s' is not a number of seconds"],
		[["--approval-timeout", "90000"], "bad_value", "--approval-timeout: '90000' is not a number of seconds"],
		[["--cwd"], "missing_value", "--cwd needs a value: a directory"],
		[["--approve"], "unknown_option", "unknown option '--approve' (omp options go after '--')"],
		[["serve"], "unknown_option", "unknown option 'serve'"],
	];
	for (const [argv, code, message] of refused) {
		test(`${JSON.stringify(argv)} -> ${code} naming the flag and value`, () => {
			const r = parseHostArgs(argv, true);
			expect(r.ok).toBe(false);
			if (r.ok) return;
			expect(r.code).toBe(code as typeof r.code);
			expect(r.why).toContain(message);
		});
	}
});

describe("readFrame", () => {
	const line = (o: unknown) => JSON.stringify(o);

	test("an Approve/Deny select -> approval with the tool and its detail lines", () => {
		const f = readFrame(
			line({
				type: "extension_ui_request",
				id: "7",
				method: "select",
				title: "Allow tool: write\nPath: /tmp/w1.txt\nContent:\none",
				options: ["Approve", "Deny"],
			}),
		);
		// Built by the host alone: its line breaks and a caller's look alike, so the rest is one exact text.
		const rest = "Path: /tmp/w1.txt\\nContent:\\none";
		expect(f).toEqual({ kind: "approval", prompt: { id: "7", tool: "write", start: rest, details: [rest] } });
	});

	test("other dialogs -> dialog (to be cancelled); notify, cancel, errors and the rest keep their meaning", () => {
		const ui = (o: Record<string, unknown>) => line({ type: "extension_ui_request", id: "9", ...o });
		expect(readFrame(ui({ method: "select", title: "Pick", options: ["a", "b"] }))).toEqual({
			kind: "dialog",
			id: "9",
			method: "select",
			title: "Pick",
		});
		expect(readFrame(ui({ method: "confirm", title: "Sure?" }))).toMatchObject({ kind: "dialog", method: "confirm" });
		expect(readFrame(ui({ method: "input", title: "Name" }))).toMatchObject({ kind: "dialog", method: "input" });
		expect(readFrame(ui({ method: "notify", message: "hi", notifyType: "warning" }))).toEqual({
			kind: "notify",
			message: "hi",
			level: "warning",
		});
		expect(readFrame(ui({ method: "cancel", targetId: "7" }))).toEqual({ kind: "cancel", targetId: "7" });
		expect(readFrame(ui({ method: "setWidget" }))).toEqual({ kind: "other", type: "extension_ui_request/setWidget" });
		expect(readFrame(line({ type: "extension_error", extensionPath: "/x.ts", error: "boom" }))).toEqual({
			kind: "extension_error",
			message: "/x.ts: boom",
		});
		expect(readFrame(line({ type: "ready" }))).toEqual({ kind: "ready" });
		expect(readFrame(line({ type: "response", id: "1" }))).toEqual({ kind: "other", type: "response" });
		expect(readFrame("Warning: not json")).toEqual({ kind: "not_json", line: "Warning: not json" });
		expect(readFrame("[1,2]")).toEqual({ kind: "not_json", line: "[1,2]" });
	});

	test("a title without 'Allow tool:' -> all of it one exactly-shown detail", () => {
		expect(parseApprovalTitle("Run it?\nCommand: ls")).toEqual({
			tool: "(unnamed tool)",
			start: "Run it?\\nCommand: ls",
			details: ["Run it?\\nCommand: ls"],
		});
	});

	test("answers are one JSON line each, in the shape omp reads (host facts §4)", () => {
		expect(answerFrame("7", "Deny")).toBe('{"type":"extension_ui_response","id":"7","value":"Deny"}\n');
		expect(cancelFrame("9")).toBe('{"type":"extension_ui_response","id":"9","cancelled":true}\n');
	});

	test("the bridge's own announcement and mcp-json text are recognised", () => {
		const token = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";
		expect(parseAnnouncement(announcement("http://127.0.0.1:8765/", token))).toEqual({
			url: "http://127.0.0.1:8765/",
			tokenPrefix: "abcdef…",
		});
		expect(parseAnnouncement("A2A bridge: created /x with a new token")).toBeNull();
		// The one start notice: URL line first, the approval picture below it; a random port adds a note.
		const notice = startNotice("http://127.0.0.1:8765/", token, true, ["approvals: yolo", "blob=write: x"]);
		expect(parseAnnouncement(notice)).toEqual({
			url: "http://127.0.0.1:8765/",
			tokenPrefix: "abcdef…",
			note: 'port 0 in the config: a new port at every start (set "port" to keep this URL)',
		});
		expect(parseApprovalPicture(notice)).toEqual(["approvals: yolo", "blob=write: x"]);
		expect(parseApprovalPicture(announcement("http://127.0.0.1:8765/", token))).toBeNull();
		expect(isMcpEntry(mcpJson("http://127.0.0.1:8765/", token, "omp-host", true))).toBe(true);
		expect(isMcpEntry(mcpJson("http://127.0.0.1:8765/", token, "omp-labbox-8765"))).toBe(true);
		expect(isMcpEntry("{}")).toBe(false);
		expect(isMcpEntry("A2A bridge not running")).toBe(false);
		expect(isBridgeFailure("A2A bridge not started: field 'port' must be an integer")).toBe(true);
		expect(isNoModelFailure("\nNo models available. Use /login or set an API key")).toBe(true);
		expect(isNoModelFailure("Failed to load extension")).toBe(false);
	});
});

/** A terminal stand-in: lines pushed by the test, ended like Ctrl-D. */
function terminalInput() {
	const queue: string[] = [];
	let wake: (() => void) | undefined;
	let ended = false;
	return {
		push(text: string) {
			queue.push(text);
			wake?.();
		},
		end() {
			ended = true;
			wake?.();
		},
		async *[Symbol.asyncIterator]() {
			for (;;) {
				const next = queue.shift();
				if (next !== undefined) yield next;
				else if (ended) return;
				else await new Promise<void>(r => (wake = r));
			}
		},
	};
}

function manualClock() {
	const timers = new Map<number, { fn: () => void; ms: number }>();
	let n = 0;
	const clock: Clock = {
		setTimeout: (fn, ms) => {
			timers.set(++n, { fn, ms });
			return n;
		},
		clearTimeout: h => timers.delete(h as number),
	};
	const fireAll = () => {
		for (const [id, t] of [...timers]) {
			timers.delete(id);
			t.fn();
		}
	};
	return { clock, timers, fireAll };
}

function setup(mode: "ask" | "deny" | "approve" = "ask", timeoutMs = 60_000) {
	const input = terminalInput();
	const { clock, timers, fireAll } = manualClock();
	let screen = "";
	const approver = new Approver({
		mode,
		timeoutMs,
		input,
		clock,
		output: {
			write: t => {
				screen += t;
			},
		},
	});
	return { approver, input, timers, fireAll, screen: () => screen };
}

const bash: ApprovalPrompt = {
	id: "p1",
	tool: "bash",
	start: "Command: rm -rf build",
	details: ["Command: rm -rf build"],
};
const write: ApprovalPrompt = {
	id: "p2",
	tool: "write",
	start: "Path: /tmp/out.txt",
	details: ["Path: /tmp/out.txt", "Content:", "x"],
};
/** Lets the approver's reader take the pushed input (one macrotask). */
const tick = () => new Promise(r => setTimeout(r, 0));

describe("Approver", () => {
	test("deny mode -> Deny at once, nothing shown; approve mode -> Approve", async () => {
		const d = setup("deny");
		expect(await d.approver.decide(bash)).toEqual({ value: "Deny", reason: "--approvals deny" });
		expect(d.screen()).toBe("");
		expect(await setup("approve").approver.decide(bash)).toEqual({ value: "Approve", reason: "--approvals approve" });
	});

	test("ask shows the tool and its command, y -> Approve", async () => {
		const s = setup();
		const pending = s.approver.decide(bash);
		expect(s.screen()).toContain("Approval needed: bash\n  Command: rm -rf build\n");
		expect(s.screen()).toContain("Deny in 60 s");
		s.input.push("y\n");
		expect(await pending).toEqual({ value: "Approve", reason: "answered on the terminal" });
		expect(s.timers.size).toBe(0);
	});

	test("ask: n, an empty line (the default) and 'deny' -> Deny; an unclear answer asks again", async () => {
		for (const typed of ["n\n", "\n", "DENY\r\n"]) {
			const s = setup();
			const pending = s.approver.decide(write);
			expect(s.screen()).toContain("Approval needed: write\n  Path: /tmp/out.txt\n");
			s.input.push(typed);
			expect(await pending).toEqual({ value: "Deny", reason: "answered on the terminal" });
		}
		const s = setup();
		const pending = s.approver.decide(bash);
		s.input.push("maybe\n");
		await tick();
		expect(s.screen()).toContain("Type y to approve or n to deny");
		s.input.push("yes\n");
		expect((await pending).value).toBe("Approve");
	});

	test("ask: no answer before the timeout -> Deny, naming the time", async () => {
		const s = setup("ask", 5_000);
		const pending = s.approver.decide(bash);
		expect([...s.timers.values()][0]?.ms).toBe(5_000);
		s.fireAll();
		expect(await pending).toEqual({ value: "Deny", reason: "no answer within 5 s" });
	});

	test("ask: a line typed while no prompt is shown is dropped, never answering a later prompt", async () => {
		const s = setup();
		s.input.push("y\n");
		await tick();
		const pending = s.approver.decide(bash);
		s.fireAll();
		expect((await pending).value).toBe("Deny");
	});

	test("ask: prompts queue and are shown one at a time", async () => {
		const s = setup();
		const first = s.approver.decide(bash);
		const second = s.approver.decide(write);
		expect(s.screen()).not.toContain("write");
		expect(s.screen()).toEndWith("\n(1 more waiting; answer the prompt above: ");
		s.input.push("y\n");
		expect((await first).value).toBe("Approve");
		expect(s.screen()).toContain("Approval needed: write");
		s.input.push("n\n");
		expect((await second).value).toBe("Deny");
	});

	test("ask: a prompt the host withdraws is dropped and the next one shown", async () => {
		const s = setup();
		const first = s.approver.decide(bash);
		const second = s.approver.decide(write);
		expect(s.approver.withdraw("p1")).toBe(true);
		expect(s.screen()).toContain("(withdrawn by the host)");
		expect(s.screen()).toContain("Approval needed: write");
		s.input.push("y\n");
		expect((await second).value).toBe("Approve");
		expect(s.approver.withdraw("unknown")).toBe(false);
		expect(await Promise.race([first.then(() => "answered"), tick().then(() => "open")])).toBe("open");
	});

	test("ask: terminal input closed -> the open prompt and every later one -> Deny", async () => {
		const s = setup();
		const open = s.approver.decide(bash);
		s.input.end();
		expect(await open).toEqual({ value: "Deny", reason: "terminal input closed" });
		expect(await s.approver.decide(write)).toEqual({ value: "Deny", reason: "terminal input closed" });
	});

	test("ask without any input stream -> Deny", async () => {
		const approver = new Approver({ mode: "ask", timeoutMs: 1000, output: { write: () => {} } });
		expect(await approver.decide(bash)).toEqual({ value: "Deny", reason: "terminal input closed" });
	});

	test("long details: 40 lines shown, then a marker; a long line cut only with a marker counting the rest", () => {
		const s = setup();
		const details = Array.from({ length: 50 }, (_, i) => `${i}:${"x".repeat(300)}`);
		details[1] = `1:${"y".repeat(5000)}`;
		void s.approver.decide({ id: "big", tool: "write", start: "", details });
		expect(s.screen()).toContain(`  39:${"x".repeat(300)}\n`);
		expect(s.screen()).toContain(`  1:${"y".repeat(3998)}… 1002 more characters\n`);
		expect(s.screen()).not.toContain("40:x");
		expect(s.screen()).toContain("… 10 more lines");
	});

	test("hostile details (issue 20: \\r, ESC[2K, C1 CSI, RLO) -> shown as escapes, on screen and in the decision line", () => {
		const s = setup();
		const evil: ApprovalPrompt = {
			id: "evil",
			tool: "bash\x1b[2K",
			start: "Command: touch /tmp/pwned\rCommand: ls -la \x1b[2K\u009b1K\u202edwp",
			details: ["Command: touch /tmp/pwned\rCommand: ls -la \x1b[2K\u009b1K\u202edwp"],
			caller: { tokenName: "ci", client: "x\u2066y" },
		};
		void s.approver.decide(evil);
		const screen = s.screen();
		expect(screen).toContain("Approval needed: bash\\x1b[2K from token ci, client x\\u2066y\n");
		expect(screen).toContain("  Command: touch /tmp/pwned\\rCommand: ls -la \\x1b[2K\\x9b1K\\u202edwp\n");
		expect(hasHidden(screen.replaceAll("\n", ""))).toBe(false);
		const line = describeDecision(evil, { value: "Deny", reason: "answered on the terminal" });
		expect(line).toBe(
			"approval: bash\\x1b[2K (Command: touch /tmp/pwned\\rCommand: ls -la \\x1b[2K\\x9b1K\\u202edwp) from token ci, client x\\u2066y -> Deny (answered on the terminal)",
		);
	});

	test("type-ahead (issue 20): y\\ny\\n in one read while A shows approves A only; B starts with empty input", async () => {
		const s = setup();
		const a = s.approver.decide(bash);
		const b = s.approver.decide(write);
		s.input.push("y\ny\n");
		expect((await a).value).toBe("Approve");
		await tick();
		expect(s.screen()).toContain("Approval needed: write");
		s.fireAll();
		expect(await b).toEqual({ value: "Deny", reason: "no answer within 60 s" });
	});

	test("type-ahead (issue 20): A withdrawn while 'y' is half typed -> the newline after B shows answers nothing", async () => {
		const s = setup();
		void s.approver.decide(bash);
		const b = s.approver.decide(write);
		s.input.push("y");
		await tick();
		s.approver.withdraw("p1");
		s.input.push("\n");
		await tick();
		s.input.push("n\n");
		expect(await b).toEqual({ value: "Deny", reason: "answered on the terminal" });
		// The lone newline was an empty line for B (Deny too): prove the half-typed 'y' did not approve.
		const c = setup();
		void c.approver.decide(bash);
		const cb = c.approver.decide(write);
		c.input.push("y");
		await tick();
		c.approver.withdraw("p1");
		c.input.push("es\n");
		await tick();
		expect(c.screen()).toContain("Type y to approve or n to deny");
		c.fireAll();
		expect((await cb).value).toBe("Deny");
	});

	test("every decision has one printable line with the tool and its first detail", () => {
		expect(describeDecision(bash, { value: "Deny", reason: "--approvals deny" })).toBe(
			"approval: bash (Command: rm -rf build) -> Deny (--approvals deny)",
		);
		expect(describeDecision(write, { value: "Deny", reason: "r" })).toBe(
			"approval: write (Path: /tmp/out.txt +2 more lines) -> Deny (r)",
		);
		expect(readAnswer(" A ")).toBe("Approve");
		expect(readAnswer("later")).toBeUndefined();
	});
});

describe("withTokenPlaceholder", () => {
	test("the /a2a mcp-json entry -> the token replaced by <TOKEN>, the rest byte-identical", () => {
		const token = "AbCdEf0123456789_-AbCdEf0123456789_-AbCdEf0";
		const entry = mcpJson("http://127.0.0.1:7777/", token, "omp-host");
		const shown = withTokenPlaceholder(entry);
		expect(shown).not.toContain(token);
		expect(shown).toBe(entry.replace(token, TOKEN_PLACEHOLDER));
		expect(JSON.parse(shown).mcpServers["omp-host"].headers.Authorization).toBe("Bearer <TOKEN>");
	});
});
