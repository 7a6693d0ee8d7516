/**
 * One run of a matrix client against a host: a throwaway HOME, the wire recorder in front of the bridge,
 * the scripted model, the client's documented setup (then `patch`, for a check that changes one setting),
 * its run, and its own status command. Everything it started is stopped and removed afterwards.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Host } from "../helpers/host.ts";
import { binOf, type MatrixClient } from "./clients.ts";
import { startModelStub } from "./model-stubs.ts";
import { startWireRecorder, type WireRecord } from "./wire.ts";

const SERVER = "omp_host";

export interface Outcome {
	code: number | null;
	/** What the client's own status command printed (empty when it has none or it was not asked for). */
	status: string;
	output: string;
	records: WireRecord[];
	called: string[];
	toolResults: string[];
	/** Wall time of the client's run, not counting setup and status. */
	seconds: number;
}

export interface RunOptions {
	secret: string;
	command: string;
	/** Arguments the scripted model adds to its `bash` call (e.g. the command's own timeout). */
	extraArgs: Record<string, unknown>;
	timeoutMs?: number;
	/** Runs after the documented setup, before the client starts (receives the client's HOME). */
	patch?: (home: string) => void;
	/** Run the client's status command afterwards (default true). */
	status?: boolean;
}

export async function runClient(host: Host, c: MatrixClient, opts: RunOptions): Promise<Outcome> {
	const { secret, command } = opts;
	const home = mkdtempSync(join(tmpdir(), `a2a-client-${c.id}-`));
	const cwd = join(home, "work");
	mkdirSync(cwd);
	const rec = startWireRecorder(host.url);
	const stub = startModelStub({ server: SERVER, command, extraArgs: opts.extraArgs });
	try {
		const run = await c.driver.prepare({
			home,
			cwd,
			url: rec.url,
			secret,
			model: stub.base,
			bin: binOf(c),
			command,
			server: SERVER,
		});
		opts.patch?.(home);
		const t0 = Date.now();
		const p = Bun.spawn(run.cmd, {
			env: run.env,
			cwd,
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
			timeout: opts.timeoutMs ?? run.timeoutMs,
			killSignal: "SIGKILL",
		});
		const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
		const code = await p.exited;
		const seconds = (Date.now() - t0) / 1000;
		let status = "";
		if (run.status && opts.status !== false) {
			const s = Bun.spawn(run.status, { env: run.env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
			const timer = setTimeout(() => s.kill("SIGKILL"), 60_000);
			status = (await Promise.all([new Response(s.stdout).text(), new Response(s.stderr).text()])).join("\n");
			clearTimeout(timer);
		}
		return {
			code,
			status,
			output: `${out}\n${err}`,
			records: rec.records,
			called: stub.called,
			toolResults: stub.toolResults,
			seconds,
		};
	} finally {
		stub.stop();
		await rec.stop();
		rmSync(home, { recursive: true, force: true });
	}
}
