/**
 * The host end of the demos (`npm run demo`, `npm run demo:lab`): a throwaway HOME, and `npm run host`'s
 * script started in it (approving every prompt) in its own process group, stopped the way Ctrl-C does.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawn } from "bun";

const ROOT = resolve(import.meta.dir, "..");
/** Bounds for each step; a cold first boot took 2-8 s here. */
const HOST_BOOT_MS = 120_000;
const STOP_MS = 30_000;

/** A HOME with an empty ~/.omp/agent and a work directory that never lets Bun fetch packages. */
export function homeDir(base: string, name: string): string {
	const home = join(base, name);
	mkdirSync(join(home, ".omp", "agent"), { recursive: true });
	mkdirSync(join(home, "work"), { recursive: true });
	// A mistaken import must never make Bun fetch packages at run time.
	writeFileSync(join(home, "work", "bunfig.toml"), '[install]\nauto = "disable"\n');
	return home;
}

export const envFor = (home: string): Record<string, string> => ({
	HOME: home,
	PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
	TMPDIR: process.env.TMPDIR ?? "/tmp",
	LANG: "C.UTF-8",
});

export interface DemoHost {
	url: string;
	/** The owner token, read from the host's a2a-bridge.json. */
	secret: string;
	/** Stops it (SIGINT to its group, SIGKILL after a bound); resolves with its last line. */
	stop(): Promise<string>;
}

/** Starts the headless host serving `home`/work and resolves once it prints its URL. */
export async function startDemoHost(home: string): Promise<DemoHost> {
	// Its own process group, so the stop below reaches it the way Ctrl-C does.
	const host = spawn({
		cmd: [process.execPath, join(ROOT, "scripts", "host.ts"), "--approvals", "approve"],
		cwd: join(home, "work"),
		env: envFor(home),
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
		detached: true,
	});
	let out = "";
	const reading = (async () => {
		const decoder = new TextDecoder();
		for await (const chunk of host.stdout) out += decoder.decode(chunk, { stream: true });
	})();
	const err = new Response(host.stderr).text();
	const stop = async (): Promise<string> => {
		try {
			process.kill(-host.pid, "SIGINT");
		} catch {}
		const stopped = await Promise.race([host.exited.then(() => true), Bun.sleep(STOP_MS).then(() => false)]);
		if (!stopped) host.kill("SIGKILL");
		await reading;
		return out.trimEnd().split("\n").at(-1) ?? "";
	};
	const deadline = Date.now() + HOST_BOOT_MS;
	while (!/^ {2}URL: /m.test(out) && host.exitCode === null && Date.now() < deadline) await Bun.sleep(100);
	const url = out.match(/^ {2}URL: +(\S+)/m)?.[1];
	if (!url) {
		await stop();
		throw new Error(`the host did not start:\n${out}${await err}`);
	}
	const secret = JSON.parse(readFileSync(join(home, ".omp", "agent", "a2a-bridge.json"), "utf8")).token as string;
	return { url, secret, stop };
}
