/**
 * The approver is a slot with a share (contract §19, issue 38 item 7), against the real host through
 * `npm run host --approvals ask` with three tokens: prompts show one at a time and take turns across
 * tokens, a token's prompts beyond its bound are refused (not denied) and never run, and `deny-queue NAME`
 * typed on the host's terminal denies all of one token's prompts. Checked on the files the commands would
 * create and on the audit log, beside the replies and the terminal.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import { auditRecords } from "../../helpers/audit.ts";
import { BUN, PLACEHOLDER_MODELS, ROOT } from "../../helpers/host.ts";

const HOST_SCRIPT = join(ROOT, "scripts", "host.ts");
const secret = (c: string) => c.repeat(43);
const TOKENS = { owner: secret("o"), a: secret("a"), b: secret("b"), c: secret("c") };

class Host {
	out = "";
	url = "";
	proc!: Subprocess<"pipe", "pipe", "pipe">;
	readonly home = mkdtempSync(join(tmpdir(), "a2a-share-"));
	readonly cwd = join(this.home, "work");

	async start(args: string[]): Promise<void> {
		mkdirSync(this.cwd, { recursive: true });
		mkdirSync(join(this.home, ".omp", "agent"), { recursive: true });
		writeFileSync(join(this.home, ".omp", "agent", "models.yml"), PLACEHOLDER_MODELS);
		const tokens = ["a", "b", "c"].map(name => ({ name, token: TOKENS[name as "a"] }));
		writeFileSync(join(this.home, ".omp", "agent", "a2a-bridge.json"), JSON.stringify({ token: TOKENS.owner, tokens }));
		const env = {
			PATH: process.env.PATH ?? "",
			HOME: this.home,
			TMPDIR: process.env.TMPDIR ?? "/tmp",
			LANG: "C.UTF-8",
		};
		this.proc = spawn({
			cmd: [BUN, HOST_SCRIPT, "--", ...args],
			cwd: this.cwd,
			env,
			stdin: "pipe",
			stdout: "pipe",
			stderr: "pipe",
		});
		for (const stream of [this.proc.stdout, this.proc.stderr]) {
			(async () => {
				const decoder = new TextDecoder();
				for await (const chunk of stream) this.out += decoder.decode(chunk, { stream: true });
			})();
		}
		this.url = (await this.waitFor(/^ {2}URL: +(\S+)/m, 90_000))[1] ?? "";
		await this.waitFor(/^a2a host: Ctrl-C stops$/m);
	}

	async waitFor(re: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const m = this.out.match(re);
			if (m) return m;
			if (Date.now() > deadline) throw new Error(`no ${re} within ${timeoutMs} ms in:\n${this.out}`);
			if (this.proc.exitCode !== null) throw new Error(`host exited before ${re}:\n${this.out}`);
			await Bun.sleep(50);
		}
	}

	/** Waits until `n` prompts were shown in all; the tokens of the prompts shown, in order. */
	async prompts(n: number): Promise<string[]> {
		const deadline = Date.now() + 30_000;
		for (;;) {
			const shown = [...this.out.matchAll(/^Approval needed[^:\n]*: bash from token (\w+)/gm)].map(m => m[1] ?? "");
			if (shown.length >= n) return shown;
			if (Date.now() > deadline) throw new Error(`${n} prompts not shown within 30 s:\n${this.out}`);
			await Bun.sleep(50);
		}
	}

	type(text: string): void {
		this.proc.stdin.write(text);
		this.proc.stdin.flush();
	}

	get auditPath(): string {
		return join(this.home, ".omp", "agent", "a2a-bridge.log");
	}
}

/** A client of one token: a session, then one `bash` call; resolves with the call's reply. */
async function bash(
	h: Host,
	token: keyof typeof TOKENS,
	command: string,
	cancel?: Promise<void>,
): Promise<{ isError: boolean; text: string }> {
	const headers = { authorization: `Bearer ${TOKENS[token]}`, "content-type": "application/json" };
	const post = (body: unknown, extra: Record<string, string> = {}) =>
		fetch(h.url, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
	const init = await post({
		jsonrpc: "2.0",
		id: 0,
		method: "initialize",
		params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: `cli-${token}`, version: "0" } },
	});
	const sid = init.headers.get("mcp-session-id") ?? "";
	await init.text();
	// The client's own cancel (MCP notifications/cancelled), sent when the test says so.
	cancel?.then(() =>
		post(
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
			{ "mcp-session-id": sid },
		).then(r => r.text()),
	);
	const res = await post(
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command } } },
		{ "mcp-session-id": sid },
	);
	const body = (await res.json()) as {
		result?: { isError: boolean; content: Array<{ text: string }> };
		error?: { message: string };
	};
	if (body.result === undefined) return { isError: true, text: `error: ${body.error?.message}` };
	return { isError: body.result.isError, text: body.result.content.map(c => c.text).join("") };
}

const h = new Host();
beforeAll(async () => {
	await h.start(["--approvals", "ask", "--approval-queue", "3", "--", "--approval-mode", "always-ask"]);
}, 120_000);
afterAll(() => {
	if (h.proc?.exitCode === null) h.proc.kill("SIGKILL");
	rmSync(h.home, { recursive: true, force: true });
});

/** The done records of calls whose command touched `file`. */
const doneOf = (file: string) =>
	auditRecords(h.auditPath, r => r.phase === "done" && JSON.stringify(r.args).includes(`touch ${file}`));

describe("the approver is a slot with a share (issue 38 item 7)", () => {
	test("banner and usage name the share and the deny-queue command", () => {
		expect(h.out).toContain("remote calls' prompts take turns across tokens");
		expect(h.out).toContain('type "deny-queue NAME" to deny all of token NAME\'s');
	});

	test("turns round-robin: B's and C's prompts come before A's 2nd; A's 4th waiting is refused and never runs", async () => {
		const before = (await h.prompts(0)).length;
		const a1 = bash(h, "a", "touch rr-a1");
		await h.prompts(before + 1);
		const waiting = [];
		for (const n of [2, 3, 4]) {
			waiting.push(bash(h, "a", `touch rr-a${n}`));
			await Bun.sleep(300);
		}
		const refused = await bash(h, "a", "touch rr-a5");
		expect(refused.isError).toBe(true);
		expect(refused.text).toMatch(/approval queue full: token 'a' already has 3 prompts waiting/);
		expect(refused.text).not.toContain("Tool call denied");
		const b1 = bash(h, "b", "touch rr-b1");
		await Bun.sleep(300);
		const c1 = bash(h, "c", "touch rr-c1");
		await Bun.sleep(300);
		for (let k = 1; k <= 6; k++) {
			await h.prompts(before + k);
			h.type("y\n");
			await Bun.sleep(100);
		}
		const replies = await Promise.all([a1, ...waiting, b1, c1]);
		expect(replies.map(r => r.isError)).toEqual([false, false, false, false, false, false]);
		expect((await h.prompts(before + 6)).slice(before)).toEqual(["a", "b", "c", "a", "a", "a"]);
		// While A's first showed, the terminal said that others wait for their turn.
		expect(h.out).toContain("(a prompt waits for its turn: bash from token b; answer the prompt above: ");
		// Second channel: what ran is on disk and in the audit; the refused call neither.
		for (const f of ["rr-a1", "rr-a2", "rr-a3", "rr-a4", "rr-b1", "rr-c1"])
			expect(existsSync(join(h.cwd, f))).toBe(true);
		expect(existsSync(join(h.cwd, "rr-a5"))).toBe(false);
		expect(doneOf("rr-a5").map(r => [r.token, r.isError])).toEqual([["a", true]]);
		expect(doneOf("rr-b1").map(r => [r.token, r.isError])).toEqual([["b", false]]);
	}, 90_000);

	test("deny-queue a: A's shown and waiting prompts are all denied, none runs; B's prompt shows next and runs", async () => {
		const before = (await h.prompts(0)).length;
		const shown = bash(h, "a", "touch dq-a1");
		await h.prompts(before + 1);
		const waiting = [];
		for (const n of [2, 3, 4]) {
			waiting.push(bash(h, "a", `touch dq-a${n}`));
			await Bun.sleep(300);
		}
		const b = bash(h, "b", "touch dq-b1");
		await Bun.sleep(300);
		h.type("deny-queue a\n");
		const denied = await Promise.all([shown, ...waiting]);
		for (const r of denied) expect(r).toEqual({ isError: true, text: "Tool call denied by user: bash" });
		expect((await h.prompts(before + 2)).slice(before)).toEqual(["a", "b"]);
		h.type("y\n");
		expect((await b).isError).toBe(false);
		await h.waitFor(/denied \d approval prompt\(s\) of token 'a'/);
		expect(h.out).toContain("from token a, client cli-a -> Deny (deny-queue a on the terminal)");
		for (const n of [1, 2, 3, 4]) {
			expect(existsSync(join(h.cwd, `dq-a${n}`))).toBe(false);
			expect(doneOf(`dq-a${n}`).map(r => [r.token, r.isError])).toEqual([["a", true]]);
		}
		expect(existsSync(join(h.cwd, "dq-b1"))).toBe(true);
	}, 90_000);

	test("a waiting prompt ends on its call's cancellation: never shown, never run", async () => {
		const before = (await h.prompts(0)).length;
		const a1 = bash(h, "a", "touch cx-a1");
		await h.prompts(before + 1);
		let cancel = () => {};
		const b1 = bash(h, "b", "touch cx-b1", new Promise<void>(r => (cancel = r)));
		await Bun.sleep(500);
		cancel();
		expect(await b1).toEqual({ isError: true, text: "error: request cancelled" });
		const c1 = bash(h, "c", "touch cx-c1");
		await Bun.sleep(300);
		h.type("y\n");
		await h.prompts(before + 2);
		h.type("y\n");
		expect([(await a1).isError, (await c1).isError]).toEqual([false, false]);
		expect((await h.prompts(before + 2)).slice(before)).toEqual(["a", "c"]);
		expect(existsSync(join(h.cwd, "cx-b1"))).toBe(false);
		expect(doneOf("cx-b1").map(r => [r.token, r.isError])).toEqual([["b", true]]);
	}, 90_000);

	test("revoking a token (a config edit) ends its waiting prompts; the shown one is withdrawn; none runs", async () => {
		const before = (await h.prompts(0)).length;
		const shown = bash(h, "c", "touch rv-c1");
		await h.prompts(before + 1);
		const waiting = [bash(h, "c", "touch rv-c2"), bash(h, "c", "touch rv-c3")];
		await Bun.sleep(500);
		const tokens = ["a", "b"].map(name => ({ name, token: TOKENS[name as "a"] }));
		writeFileSync(join(h.home, ".omp", "agent", "a2a-bridge.json"), JSON.stringify({ token: TOKENS.owner, tokens }));
		const replies = await Promise.all([shown, ...waiting].map(p => p.catch(e => ({ isError: true, text: String(e) }))));
		expect(replies.every(r => r.isError)).toBe(true);
		await h.waitFor(/token 'c' revoked/);
		for (const n of [1, 2, 3]) expect(existsSync(join(h.cwd, `rv-c${n}`))).toBe(false);
		expect((await h.prompts(before + 1)).slice(before)).toEqual(["c"]);
		// The turn passes on: another token's prompt shows and runs.
		const b1 = bash(h, "b", "touch rv-b1");
		await h.prompts(before + 2);
		h.type("y\n");
		expect((await b1).isError).toBe(false);
	}, 90_000);
});

describe("a prompt waits for its turn no longer than --approval-timeout (issue 38 item 7)", () => {
	const short = new Host();
	beforeAll(async () => {
		await short.start(["--approvals", "ask", "--approval-timeout", "2", "--", "--approval-mode", "always-ask"]);
	}, 120_000);
	afterAll(() => {
		if (short.proc?.exitCode === null) short.proc.kill("SIGKILL");
		rmSync(short.home, { recursive: true, force: true });
	});

	test("A's prompt times out to Deny on screen, B's is shown next, C's wait ends in a refusal; none runs", async () => {
		const a = bash(short, "a", "touch wt-a1");
		await short.prompts(1);
		// B queues 1 s into A's 2 s prompt, so its own 2 s wait outlasts A's by a second even on a loaded machine.
		await Bun.sleep(1000);
		const b = bash(short, "b", "touch wt-b1");
		await Bun.sleep(300);
		const c = bash(short, "c", "touch wt-c1");
		const [ra, rb, rc] = await Promise.all([a, b, c]);
		expect(ra).toEqual({ isError: true, text: "Tool call denied by user: bash" });
		expect(rb).toEqual({ isError: true, text: "Tool call denied by user: bash" });
		expect(rc.isError).toBe(true);
		expect(rc.text).toMatch(/^no turn at the host's approver within 2 s .*did not run and was not denied$/);
		expect(await short.prompts(2)).toEqual(["a", "b"]);
		expect(short.out).toContain("-> Deny (no answer within 2 s)");
		for (const f of ["wt-a1", "wt-b1", "wt-c1"]) expect(existsSync(join(short.cwd, f))).toBe(false);
		const done = auditRecords(short.auditPath, r => r.phase === "done" && JSON.stringify(r.args).includes("wt-c1"));
		expect(done.map(r => [r.token, r.isError])).toEqual([["c", true]]);
	}, 60_000);
});
