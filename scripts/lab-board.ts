/**
 * The simulated board (test/fixtures/lab/board.py) seen from outside: start it on its own pseudo-terminal
 * pair, read its record of what it received (DIR/board.jsonl), wait for an event in it, power it off.
 * Used by the lab end-to-end tests and by `npm run demo:lab`; the record is their second channel.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Subprocess, spawn } from "bun";

/** The board, its console and its flasher (Python 3 standard library only). */
export const LAB_FIXTURES = resolve(import.meta.dir, "..", "test", "fixtures", "lab");

export interface BoardEvent {
	t: number;
	event: "power-on" | "booted" | "line" | "interrupt" | "flash" | "reboot" | "power-off";
	text?: string;
	sha256?: string | null;
	size?: number;
	ok?: boolean;
}

export class SimBoard {
	/** The serial end, as a console or flasher opens it (a link to /dev/pts/N). */
	readonly serial: string;
	readonly #record: string;
	readonly #proc: Subprocess<"ignore", "pipe", "pipe">;

	private constructor(dir: string, proc: Subprocess<"ignore", "pipe", "pipe">) {
		this.serial = join(dir, "ttyBOARD");
		this.#record = join(dir, "board.jsonl");
		this.#proc = proc;
	}

	/** Powers the board on in `dir` and resolves once its serial end exists and its first boot is done. */
	static async start(dir: string, timeoutMs = 20_000): Promise<SimBoard> {
		const proc = spawn({
			cmd: ["python3", join(LAB_FIXTURES, "board.py"), dir],
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
		});
		const board = new SimBoard(dir, proc);
		await board.until("its first boot", e => e.event === "booted", timeoutMs);
		return board;
	}

	get pid(): number {
		return this.#proc.pid;
	}

	/** Everything the board recorded so far, oldest first. */
	events(): BoardEvent[] {
		if (!existsSync(this.#record)) return [];
		return readFileSync(this.#record, "utf8")
			.split("\n")
			.filter(l => l.trim() !== "")
			.map(l => JSON.parse(l) as BoardEvent);
	}

	/** The first event after the `after`-th that `pred` accepts; polls the record within a bound. */
	async until(what: string, pred: (e: BoardEvent) => boolean, timeoutMs = 20_000, after = 0): Promise<BoardEvent> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const hit = this.events().slice(after).find(pred);
			if (hit) return hit;
			if (this.#proc.exitCode !== null) {
				throw new Error(`the board exited (${this.#proc.exitCode}) before ${what}: ${await this.#stderr()}`);
			}
			if (Date.now() > deadline) {
				throw new Error(`the board recorded no ${what} within ${timeoutMs} ms: ${JSON.stringify(this.events())}`);
			}
			await Bun.sleep(25);
		}
	}

	async #stderr(): Promise<string> {
		return new Response(this.#proc.stderr).text();
	}

	async stop(): Promise<void> {
		if (this.#proc.exitCode === null) this.#proc.kill("SIGTERM");
		const done = await Promise.race([this.#proc.exited.then(() => true), Bun.sleep(3000).then(() => false)]);
		if (!done) this.#proc.kill("SIGKILL");
		await this.#proc.exited;
	}
}
