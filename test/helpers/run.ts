/** Runs a command to its end (stdin closed) and collects its exit code and output, within a bound. */
import { spawn } from "bun";

export interface Ran {
	code: number;
	out: string;
	err: string;
}

export interface RunOptions {
	cwd?: string;
	env?: Record<string, string | undefined>;
	/** The command is killed after this long; its code then says so (a test never waits unbounded). */
	timeoutMs?: number;
}

export async function runCommand(cmd: string[], opts: RunOptions = {}): Promise<Ran> {
	const proc = spawn({ cmd, cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
	const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 110_000);
	try {
		const [code, out, err] = await Promise.all([
			proc.exited,
			new Response(proc.stdout).text(),
			new Response(proc.stderr).text(),
		]);
		return { code, out, err };
	} finally {
		clearTimeout(timer);
	}
}
