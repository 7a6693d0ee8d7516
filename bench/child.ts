/** Starts a bench server (a file next to this one) as its own process and reads the port it prints. */
import { join } from "node:path";
import { spawn } from "bun";

export interface Child {
	pid: number;
	port: number;
	url: string;
	stop(): Promise<void>;
}

export async function startChild(file: string, env: Record<string, string> = {}): Promise<Child> {
	const proc = spawn({
		cmd: [process.execPath, join(import.meta.dir, file)],
		env: { ...process.env, ...env },
		stdout: "pipe",
		stderr: "inherit",
	});
	const reader = proc.stdout.getReader();
	let text = "";
	while (!text.includes("\n")) {
		const { done, value } = await reader.read();
		if (done) throw new Error(`${file} exited before printing its port`);
		text += new TextDecoder().decode(value);
	}
	reader.releaseLock();
	const port = Number(text.trim());
	return {
		pid: proc.pid,
		port,
		url: `http://127.0.0.1:${port}/`,
		stop: async () => {
			proc.kill("SIGTERM");
			await proc.exited;
		},
	};
}
