/**
 * The process table as a second channel: a cancelled call is proven stopped only when its child
 * processes are gone, not when the bridge says so. Linux only (reads /proc).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "./wait.ts";

/** Pids whose command line contains `needle` (processes that vanish mid-scan are skipped). */
function pidsWith(needle: string): number[] {
	const pids: number[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
		try {
			if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(needle)) pids.push(Number(entry));
		} catch {}
	}
	return pids;
}

/** A `kB` field of /proc/<pid>/status (e.g. `VmRSS`), in bytes; 0 when absent. */
export const procStatus = (pid: number, key: string): number =>
	Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

/**
 * A command that runs real external processes: `sh -c '/bin/sleep 60.<tag>; touch <marker>'`.
 * Stopped means: no process carries the tag or the marker name (sh, sleep, or a touch being
 * spawned) and the marker does not exist. Once all three hold, nothing can create the marker later.
 */
export class StoppableWork {
	readonly tag = String(Math.floor(Math.random() * 1e9)).padStart(9, "0");
	readonly marker = `stop-${crypto.randomUUID()}`;
	readonly command = `sh -c '/bin/sleep 60.${this.tag}; touch ${this.marker}'`;
	readonly #dir: string;

	/** `dir` is the working directory of the tool run (the host's cwd). */
	constructor(dir: string) {
		this.#dir = dir;
	}

	pids(): number[] {
		return [...new Set([...pidsWith(`60.${this.tag}`), ...pidsWith(this.marker)])];
	}

	markerExists(): boolean {
		return existsSync(join(this.#dir, this.marker));
	}

	/** Resolves once the external sleep runs: the tool has really started. */
	async running(timeoutMs = 20_000): Promise<void> {
		await waitFor(`/bin/sleep 60.${this.tag} in the process table`, () => pidsWith(`60.${this.tag}`).length > 0, {
			timeoutMs,
		});
	}

	/** Asserts the work was stopped: its processes go away well before the sleep's 60 s, and no marker. */
	async stopped(timeoutMs = 20_000): Promise<void> {
		await waitFor(`processes of ${this.command} to end`, () => this.pids().length === 0, { timeoutMs });
		if (this.markerExists()) throw new Error(`the marker ${this.marker} was created: the command ran on`);
	}

	/** Kills what is left, so a failing test leaves no stray sleep behind. */
	cleanup(): void {
		for (const pid of this.pids()) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {}
		}
	}
}
