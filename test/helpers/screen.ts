/**
 * A program on a real terminal screen: it runs on a pseudo-terminal of a fixed size (`Bun.Terminal`),
 * and everything it writes is rendered by a terminal emulator (xterm.js, headless: line wrap,
 * scrolling, cursor movement, escape sequences) whose screen the test reads back. The second channel
 * for what an approver sees; nothing of the program under test draws it.
 */

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Terminal as Emulator } from "@xterm/headless";
import { type Subprocess, spawn } from "bun";
import { PLACEHOLDER_MODELS } from "./host.ts";

/** A throwaway HOME for a host on a screen: `.omp/agent` holding the placeholder model, and a working directory. */
export function screenHome(prefix: string): { home: string; agent: string; cwd: string } {
	const home = mkdtempSync(join(tmpdir(), prefix));
	const agent = join(home, ".omp", "agent");
	const cwd = join(home, "work");
	mkdirSync(agent, { recursive: true });
	mkdirSync(cwd);
	writeFileSync(join(agent, "models.yml"), PLACEHOLDER_MODELS);
	return { home, agent, cwd };
}

/** The environment a host on a screen runs with: nothing of the test's own but PATH (and TMPDIR when given). */
export const screenEnv = (home: string, term: string, extra: Record<string, string> = {}): Record<string, string> => ({
	PATH: process.env.PATH ?? "",
	HOME: home,
	LANG: "C.UTF-8",
	TERM: term,
	...extra,
});

/** A plain JSON MCP client (2025-11-25) of the bridge a screen's host serves, one Bearer token for every request. */
export class ScreenClient {
	constructor(
		readonly url: string,
		readonly token: string,
	) {}

	post(body: unknown, extra: Record<string, string> = {}): Promise<Response> {
		const headers = { authorization: `Bearer ${this.token}`, "content-type": "application/json", ...extra };
		return fetch(this.url, { method: "POST", headers, body: JSON.stringify(body) });
	}

	/** A new session whose client names itself `name` (the prompt's label shows it); "" when refused. */
	async session(name: string): Promise<string> {
		const init = await this.post({
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "0" } },
		});
		await init.text();
		return init.ok ? (init.headers.get("mcp-session-id") ?? "") : "";
	}

	/** `tools/call` in `session`, resolved with the call's result. */
	call(name: string, args: Record<string, unknown>, session: string): Promise<{ isError: boolean }> {
		return this.post(
			{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
			{ "mcp-session-id": session },
		).then(async r => ((await r.json()) as { result: { isError: boolean } }).result);
	}
}

export class Screen {
	readonly #emulator: Emulator;
	readonly #pty: Bun.Terminal;
	readonly #proc: Subprocess;

	private constructor(emulator: Emulator, pty: Bun.Terminal, proc: Subprocess) {
		this.#emulator = emulator;
		this.#pty = pty;
		this.#proc = proc;
	}

	/** Starts `cmd` (argv) in `cwd` with exactly `env`, on a `cols` x `rows` screen. */
	static start(cmd: string[], opts: { cwd: string; env: Record<string, string>; cols: number; rows: number }): Screen {
		const emulator = new Emulator({ cols: opts.cols, rows: opts.rows, scrollback: 5000, allowProposedApi: true });
		const pty = new Bun.Terminal({ cols: opts.cols, rows: opts.rows, data: (_t, bytes) => emulator.write(bytes) });
		const proc = spawn({ cmd, cwd: opts.cwd, env: opts.env, terminal: pty });
		return new Screen(emulator, pty, proc);
	}

	/** The rows on screen now, trailing blanks trimmed (what a person looking at it reads). */
	visible(): string[] {
		const buffer = this.#emulator.buffer.active;
		const rows: string[] = [];
		for (let i = 0; i < this.#emulator.rows; i++)
			rows.push(buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? "");
		return rows;
	}

	/** Everything printed so far, scrollback included, rows the terminal wrapped joined back into their lines. */
	history(): string {
		const buffer = this.#emulator.buffer.active;
		let out = "";
		for (let i = 0; i < buffer.length; i++) {
			const line = buffer.getLine(i);
			if (!line) continue;
			out += `${line.isWrapped ? "" : "\n"}${line.translateToString(true)}`;
		}
		return out;
	}

	/** The terminal is resized to `cols` x `rows` (the program is sent SIGWINCH; the emulator reflows). */
	resize(cols: number, rows: number): void {
		this.#pty.resize(cols, rows);
		this.#emulator.resize(cols, rows);
		// The program is not the pseudo-terminal's foreground group here, so the kernel's SIGWINCH misses it.
		this.#proc.kill("SIGWINCH");
	}

	/** Types `text` as keys ("\r" is Enter, "\x1b[B" the down arrow). */
	type(text: string): void {
		this.#pty.write(text);
	}

	/** Resolves with the first visible screen `ok` accepts; fails with the last screen seen. */
	async waitFor(what: string, ok: (rows: string[]) => boolean, timeoutMs = 30_000): Promise<string[]> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			// Let the emulator take what the program wrote before reading its screen.
			await new Promise<void>(r => this.#emulator.write("", r));
			const rows = this.visible();
			if (ok(rows)) return rows;
			if (Date.now() > deadline) throw new Error(`no screen with ${what} within ${timeoutMs} ms:\n${rows.join("\n")}`);
			if (this.#proc.exitCode !== null)
				throw new Error(`the program exited (${this.#proc.exitCode}):\n${rows.join("\n")}`);
			await Bun.sleep(100);
		}
	}

	/** SIGTERM, then SIGKILL after 10 s; the pseudo-terminal is closed once the program is gone. */
	async stop(): Promise<void> {
		if (this.#proc.exitCode === null && this.#proc.signalCode === null) {
			this.#proc.kill("SIGTERM");
			const gone = await Promise.race([this.#proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
			if (!gone) this.#proc.kill("SIGKILL");
			await this.#proc.exited;
		}
		this.#pty.close();
		this.#emulator.dispose();
	}
}
