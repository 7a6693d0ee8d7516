/**
 * The headless host (`scripts/host.ts`) as a user runs it: a subprocess in a throwaway HOME, a remote
 * MCP call through the URL it prints, approval prompts answered in each --approvals mode (ask through
 * a pipe and through a real pseudo-terminal), and a clean stop on Ctrl-C / SIGTERM.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { type Subprocess, spawn } from "bun";
import { hasHidden } from "../../../src/text/show.ts";
import { BUN, canConnect, PLACEHOLDER_MODELS, ROOT } from "../../helpers/host.ts";

const HOST_SCRIPT = join(ROOT, "scripts", "host.ts");
const ALWAYS_ASK = ["--", "--approval-mode", "always-ask"];

class Headless {
	out = "";
	proc!: Subprocess;
	terminal: Bun.Terminal | undefined;
	url = "";
	ompPid = 0;
	#waiters: Array<() => void> = [];

	constructor(
		readonly home: string,
		readonly cwd: string,
	) {}

	static async start(args: string[], opts: { files?: Record<string, string>; pty?: boolean } = {}) {
		const home = mkdtempSync(join(tmpdir(), "a2a-headless-"));
		const h = new Headless(home, join(home, "work"));
		mkdirSync(h.cwd, { recursive: true });
		for (const [rel, text] of Object.entries(opts.files ?? {})) {
			mkdirSync(join(home, rel, ".."), { recursive: true });
			writeFileSync(join(home, rel), text);
		}
		const env = { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: process.env.TMPDIR ?? "/tmp", LANG: "C.UTF-8" };
		// Bun drops a "--" right after the script path; package.json's `host` script adds one the same way.
		const cmd = [BUN, HOST_SCRIPT, "--", ...args];
		const take = (text: string) => {
			h.out += text;
			for (const w of h.#waiters.splice(0)) w();
		};
		if (opts.pty) {
			const decoder = new TextDecoder();
			h.terminal = new Bun.Terminal({ cols: 200, rows: 50, data: (_t, d) => take(decoder.decode(d)) });
			// Bun's pty is not made the controlling terminal, so Ctrl-C would signal nobody; `setsid -c` fixes
			// that (util-linux), `-w` keeps it in front so its exit status is the host's.
			h.proc = spawn({ cmd: ["setsid", "-c", "-w", ...cmd], cwd: h.cwd, env, terminal: h.terminal });
		} else {
			const proc = spawn({ cmd, cwd: h.cwd, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
			h.proc = proc;
			for (const stream of [proc.stdout, proc.stderr]) {
				(async () => {
					const decoder = new TextDecoder();
					for await (const chunk of stream) take(decoder.decode(chunk, { stream: true }));
				})();
			}
		}
		try {
			h.url = (await h.waitFor(/^ {2}URL: +(\S+)/m, 90_000))[1] ?? "";
			h.ompPid = Number((await h.waitFor(/^ {2}omp pid: +(\d+)/m))[1]);
			// The serving block ends with this line; stdout may arrive in several chunks, so wait for all of it.
			await h.waitFor(/^a2a host: Ctrl-C stops\r?$/m);
		} catch (err) {
			h.cleanup();
			throw err;
		}
		return h;
	}

	/** Resolves with the first match in everything printed so far or later. */
	async waitFor(re: RegExp, timeoutMs = 30_000, from = 0): Promise<RegExpMatchArray> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const m = this.out.slice(from).match(re);
			if (m) return m;
			if (Date.now() > deadline) throw new Error(`no ${re} within ${timeoutMs} ms in:\n${this.out}`);
			if (this.proc.exitCode !== null)
				throw new Error(`host exited (${this.proc.exitCode}) before ${re}:\n${this.out}`);
			await Promise.race([new Promise<void>(r => this.#waiters.push(r)), Bun.sleep(500)]);
		}
	}

	token(): string {
		return JSON.parse(readFileSync(join(this.home, ".omp", "agent", "a2a-bridge.json"), "utf8")).token;
	}

	type(text: string): void {
		if (this.terminal) this.terminal.write(text);
		else {
			const stdin = this.proc.stdin as import("bun").FileSink;
			stdin.write(text);
			stdin.flush();
		}
	}

	cleanup(): void {
		if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
		this.terminal?.close();
		rmSync(this.home, { recursive: true, force: true });
	}
}

async function bashCall(h: Headless, command: string): Promise<{ isError: boolean; text: string }> {
	const headers = { authorization: `Bearer ${h.token()}`, "content-type": "application/json" };
	const post = (body: unknown, extra: Record<string, string> = {}) =>
		fetch(h.url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
	const init = await post({
		jsonrpc: "2.0",
		id: 0,
		method: "initialize",
		params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } },
	});
	const sid = init.headers.get("mcp-session-id") ?? "";
	await init.text();
	const res = await post(
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command } } },
		{ "mcp-session-id": sid },
	);
	const body = (await res.json()) as { result: { isError: boolean; content: Array<{ text: string }> } };
	return { isError: body.result.isError, text: body.result.content.map(c => c.text).join("") };
}

/** Pids whose session is `sid` (omp runs as a session leader). */
function sessionMembers(sid: number): number[] {
	return readdirSync("/proc")
		.filter(n => /^\d+$/.test(n))
		.filter(n => {
			try {
				const stat = readFileSync(`/proc/${n}/stat`, "utf8");
				return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]) === sid;
			} catch {
				return false;
			}
		})
		.map(Number);
}

async function expectCleanStop(h: Headless, exitCode: number | null): Promise<void> {
	expect(exitCode).toBe(0);
	const port = Number(new URL(h.url).port);
	expect(h.out).toMatch(new RegExp(`omp shut down \\(exit 0\\); port ${port} released; no process left`));
	expect(await canConnect(port)).toBe(false);
	expect(existsSync(`/proc/${h.ompPid}`)).toBe(false);
	expect(sessionMembers(h.ompPid)).toEqual([]);
}

/** Files a user owns: everything except the host's own logs, caches, run dirs and databases. */
function userFiles(home: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const p = join(dir, e.name);
			const rel = relative(home, p);
			if (/^(\.omp\/(logs|cache|run)|\.bun|work)(\/|$)|\.db(-\w+)?$|^\.omp\/gpu_cache\.json$/.test(rel)) continue;
			if (e.isDirectory()) walk(p);
			else out[rel] = readFileSync(p, "utf8");
		}
	};
	walk(home);
	return out;
}

let current: Headless | undefined;
afterEach(() => {
	current?.cleanup();
	current = undefined;
});

const BRIDGE_CONFIG = ".omp/agent/a2a-bridge.json";
const BRIDGE_LOG = ".omp/agent/a2a-bridge.log";
const BRIDGE_RUNTIME = ".omp/agent/a2a-bridge.runtime.json";
/** The audit budget every bridge on the log shares (`<log>.budget`). */
const BRIDGE_BUDGET = ".omp/agent/a2a-bridge.log.budget";
const USER_MODELS = { ".omp/agent/models.yml": PLACEHOLDER_MODELS };

describe("headless host", () => {
	test("no TTY, no model -> placeholder for this run only, deny mode: the caller gets the denial; Ctrl-C stops cleanly", async () => {
		const h = await Headless.start([...ALWAYS_ASK]);
		current = h;
		expect(h.out).toContain("a prompt omp raises is answered Deny (default: stdin is not a terminal)");
		expect(h.out).toContain("omp has no model configured; this run adds a placeholder provider");
		expect(h.out).toMatch(/host: A2A bridge listening on http:\/\/127\.0\.0\.1:\d+\/ \(token .{6}…\)/);
		// The printed entry never carries the token (it ends up in CI logs): a placeholder and where to read it.
		expect(h.out).toContain('"Authorization": "Bearer <TOKEN>"');
		expect(h.out).not.toContain(h.token());
		expect(h.out).toContain("/a2a token");
		const marker = `deny-${crypto.randomUUID()}`;
		const r = await bashCall(h, `touch ${marker}`);
		expect(r.isError).toBe(true);
		expect(r.text).toContain("Tool call denied by user: bash");
		expect(h.out).toContain(
			`approval: bash (Command: touch ${marker}) from token owner, client test -> Deny (--approvals deny)`,
		);
		expect(existsSync(join(h.cwd, marker))).toBe(false);
		// Only the bridge's own files appeared among the user's files; the placeholder was written nowhere.
		expect(Object.keys(userFiles(h.home)).sort()).toEqual([BRIDGE_CONFIG, BRIDGE_LOG, BRIDGE_BUDGET, BRIDGE_RUNTIME]);
		h.proc.kill("SIGINT");
		await expectCleanStop(h, await h.proc.exited);
		// The runtime file lives only while the bridge serves.
		expect(Object.keys(userFiles(h.home)).sort()).toEqual([BRIDGE_CONFIG, BRIDGE_LOG, BRIDGE_BUDGET]);
	}, 120_000);

	test("the user's own config -> no placeholder, approve mode runs the call, the user's files stay byte-identical", async () => {
		const files = {
			...USER_MODELS,
			".omp/agent/config.yml": "tools:\n  approvalMode: always-ask\n",
			".omp/agent/mcp.json": '{ "mcpServers": {} }\n',
		};
		const h = await Headless.start(["--approvals", "approve"], { files });
		current = h;
		expect(h.out).toContain("a prompt omp raises is answered Approve (--approvals approve)");
		expect(h.out).not.toContain("placeholder");
		const marker = `approve-${crypto.randomUUID()}`;
		const r = await bashCall(h, `echo ${marker}`);
		expect(r).toMatchObject({ isError: false });
		expect(r.text).toContain(marker);
		expect(h.out).toContain(
			`approval: bash (Command: echo ${marker}) from token owner, client test -> Approve (--approvals approve)`,
		);
		h.proc.kill("SIGTERM");
		await expectCleanStop(h, await h.proc.exited);
		expect(userFiles(h.home)).toEqual({
			...files,
			[BRIDGE_CONFIG]: expect.any(String),
			[BRIDGE_LOG]: expect.any(String),
			[BRIDGE_BUDGET]: expect.any(String),
		});
	}, 120_000);

	test("ask through a pipe: y -> result, n -> denial, silence -> Deny after the timeout, closed input -> Deny", async () => {
		const h = await Headless.start(["--approvals", "ask", "--approval-timeout", "2", ...ALWAYS_ASK], {
			files: USER_MODELS,
		});
		current = h;
		const ask = async (command: string, answer: string | null) => {
			const from = h.out.length;
			const pending = bashCall(h, command);
			await h.waitFor(
				new RegExp(`Approval needed: bash from token owner, client test\\n {2}Command: ${command}\\n.*Deny in 2 s`),
				30_000,
				from,
			);
			if (answer !== null) h.type(answer);
			return pending;
		};
		const yes = await ask("echo ask-yes", "y\n");
		expect(yes).toMatchObject({ isError: false });
		expect(yes.text).toContain("ask-yes");
		// Each decision line and the call's answer travel on different pipes: wait for the line.
		await h.waitFor(
			/approval: bash \(Command: echo ask-yes\) from token owner, client test -> Approve \(answered on the terminal\)/,
			10_000,
		);
		const no = await ask("echo ask-no", "n\n");
		expect(no).toEqual({ isError: true, text: expect.stringContaining("denied") });
		await h.waitFor(
			/approval: bash \(Command: echo ask-no\) from token owner, client test -> Deny \(answered on the terminal\)/,
			10_000,
		);
		const silent = await ask("echo ask-silent", null);
		expect(silent.isError).toBe(true);
		await h.waitFor(
			/approval: bash \(Command: echo ask-silent\) from token owner, client test -> Deny \(no answer within 2 s\)/,
			10_000,
		);
		(h.proc.stdin as import("bun").FileSink).end();
		const closed = await bashCall(h, "echo ask-closed");
		expect(closed.isError).toBe(true);
		await h.waitFor(
			/approval: bash \(Command: echo ask-closed\) from token owner, client test -> Deny \(terminal input closed\)/,
			10_000,
		);
		h.proc.kill("SIGINT");
		await expectCleanStop(h, await h.proc.exited);
	}, 120_000);

	test("issue 20: hostile commands are shown escaped end to end; y\\ny\\n typed at prompt A never approves B", async () => {
		const h = await Headless.start(["--approvals", "ask", "--approval-timeout", "3", ...ALWAYS_ASK], {
			files: USER_MODELS,
		});
		current = h;
		// The exploits of the issue: CR, ESC[2K, the C1 CSI and RLO, each trying to make the line read `ls -la`.
		const pwned = join(h.cwd, "pwned");
		const evil = `touch ${pwned}\rCommand: ls -la \x1b[2K\x1b[1GCommand: ls \u009b2K \u202edwp`;
		let from = h.out.length;
		const denied = bashCall(h, evil);
		const shown = await h.waitFor(
			/Approval needed: bash from token owner, client test\n {2}(Command: .*)\n/,
			30_000,
			from,
		);
		expect(shown[1]).toBe(`Command: touch ${pwned}\\rCommand: ls -la \\x1b[2K\\x1b[1GCommand: ls \\x9b2K \\u202edwp`);
		h.type("n\n");
		expect((await denied).isError).toBe(true);
		await h.waitFor(/approval: bash \(Command: touch .*\) from token owner, client test -> Deny/, 10_000, from);
		// Nothing the terminal would interpret reached it: no CR, ESC, C1 or bidi character anywhere.
		expect(hasHidden(h.out.slice(from).replaceAll("\n", ""))).toBe(false);
		expect(existsSync(pwned)).toBe(false);

		// Type-ahead: two prompts asked; one write of "y\ny\n" while A shows approves A, and B (never seen
		// when the second y was typed) is not approved: it times out to Deny and its file never appears.
		// B waits in the bridge's prompt queue (one remote dialog at a time); the terminal says so from its notice.
		from = h.out.length;
		const bFile = join(h.cwd, "b-approved");
		const a = bashCall(h, "echo typed-ahead-A");
		await h.waitFor(/Command: echo typed-ahead-A\n/, 30_000, from);
		const b = bashCall(h, `touch ${bFile}`);
		await h.waitFor(/\(a prompt waits for its turn: bash from token owner; answer the prompt above: /, 30_000, from);
		h.type("y\ny\n");
		expect((await a).isError).toBe(false);
		expect((await b).isError).toBe(true);
		await h.waitFor(/approval: bash \(Command: touch .*b-approved\) .* -> Deny \(no answer within 3 s\)/, 10_000, from);
		expect(existsSync(bFile)).toBe(false);
		h.proc.kill("SIGINT");
		await expectCleanStop(h, await h.proc.exited);
	}, 120_000);

	test("a real terminal: ask is the default, the prompt shows the command, y approves, Ctrl-C stops cleanly", async () => {
		const h = await Headless.start([...ALWAYS_ASK], { files: USER_MODELS, pty: true });
		current = h;
		expect(h.out).toContain("a prompt omp raises is asked here (default: stdin is a terminal)");
		const pending = bashCall(h, "echo via-pty");
		await h.waitFor(
			// Rows of at most 36 columns (rowWidth): the header continues on a marked row, the answer has its own.
			/Approval needed: bash from token own\r?\n┆ er, client test\r?\n {2}Command: echo via-pty\r?\n[^\n]*\n[^\n]*Deny in 60 s/,
		);
		h.type("y\r");
		const r = await pending;
		expect(r).toMatchObject({ isError: false });
		expect(r.text).toContain("via-pty");
		// The decision line in rows of at most 36 columns, each continuation marked; joined, it is the whole line.
		const decision = /approval: bash[^\n]*(?:\r?\n┆ [^\n]*)*/.exec(h.out)?.[0] ?? "";
		for (const row of decision.split(/\r?\n/)) expect(Bun.stringWidth(row.replace(/\r$/, ""))).toBeLessThanOrEqual(36);
		expect(decision.replace(/\r?\n┆ /g, "").replace(/\r$/, "")).toBe(
			"approval: bash (Command: echo via-pty) from token owner, client test -> Approve (answered on the terminal)",
		);
		h.type("\x03");
		await expectCleanStop(h, await h.proc.exited);
	}, 120_000);

	test("a bad flag -> exit 2 with a message naming it, before anything starts", async () => {
		const proc = spawn({ cmd: [BUN, HOST_SCRIPT, "--", "--approvals", "sometimes"], stdout: "pipe", stderr: "pipe" });
		const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
		expect(code).toBe(2);
		expect(err).toContain("a2a host: --approvals: 'sometimes' is not one of ask, deny, approve");
		expect(err).toContain("usage: npm run host");
	});
});
