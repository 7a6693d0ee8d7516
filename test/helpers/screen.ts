/**
 * A program on a real terminal screen: tmux runs it on a pseudo-terminal of a fixed size and renders it
 * as a terminal does (line wrap, scrolling), and the test reads the screen back (`capture-pane`). The
 * second channel for what an approver sees; nothing of the program under test draws it. Each screen has
 * its own tmux server (socket), ended by `kill()`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";

export const TMUX = Bun.which("tmux");

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

export class Screen {
	readonly #socket: string;
	readonly #dir: string;

	private constructor(socket: string, dir: string) {
		this.#socket = socket;
		this.#dir = dir;
	}

	/** Starts `cmd` (argv) in `cwd` with exactly `env`, on a `cols` x `rows` screen. */
	static start(cmd: string[], opts: { cwd: string; env: Record<string, string>; cols: number; rows: number }): Screen {
		if (!TMUX) throw new Error("tmux is not installed");
		const dir = mkdtempSync(join(tmpdir(), "a2a-screen-"));
		writeFileSync(join(dir, "tmux.conf"), "set -g status off\nset -g history-limit 5000\n");
		const screen = new Screen(join(dir, "sock"), dir);
		const env = Object.entries(opts.env).map(([k, v]) => `${k}=${quote(v)}`);
		const line = ["exec", "env", "-i", ...env, ...cmd.map(quote)].join(" ");
		screen.#tmux(
			["-f", join(dir, "tmux.conf"), "new-session", "-d", "-x", String(opts.cols), "-y", String(opts.rows)],
			["-c", opts.cwd, line],
		);
		return screen;
	}

	#tmux(before: string[], after: string[] = []): string {
		const r = spawnSync({
			cmd: [TMUX ?? "tmux", "-S", this.#socket, ...before, ...after],
			stdout: "pipe",
			stderr: "pipe",
		});
		if (r.exitCode !== 0) throw new Error(`tmux ${before.join(" ")}: ${r.stderr.toString()}`);
		return r.stdout.toString();
	}

	/** The rows on screen now, trailing blanks trimmed (what a person looking at it reads). */
	visible(): string[] {
		return this.#tmux(["capture-pane", "-p"])
			.replace(/\n$/, "")
			.split("\n")
			.map(r => r.trimEnd());
	}

	/** Everything printed so far, scrollback included, wrapped rows joined back into their lines. */
	history(): string {
		return this.#tmux(["capture-pane", "-p", "-J", "-S", "-"]);
	}

	/** Types `text` as keys (literally; "\r" is Enter). */
	type(text: string): void {
		this.#tmux(["send-keys", "-l", text]);
	}

	/** Resolves with the first visible screen `ok` accepts; fails with the last screen seen. */
	async waitFor(what: string, ok: (rows: string[]) => boolean, timeoutMs = 30_000): Promise<string[]> {
		const deadline = Date.now() + timeoutMs;
		let rows: string[] = [];
		for (;;) {
			rows = this.visible();
			if (ok(rows)) return rows;
			if (Date.now() > deadline) throw new Error(`no screen with ${what} within ${timeoutMs} ms:\n${rows.join("\n")}`);
			await Bun.sleep(100);
		}
	}

	kill(): void {
		spawnSync({ cmd: [TMUX ?? "tmux", "-S", this.#socket, "kill-server"], stdout: "ignore", stderr: "ignore" });
		rmSync(this.#dir, { recursive: true, force: true });
	}
}
