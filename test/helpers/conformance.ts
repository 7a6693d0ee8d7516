/** The pinned MCP conformance suite's CLI, run under Bun (its dist needs `fs.globSync`, which Node 20 lacks). */
import { join } from "node:path";
import { ROOT } from "./host.ts";

const CLI = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

export async function conformance(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
	const proc = Bun.spawn({
		cmd: [process.execPath, CLI, ...args],
		cwd: ROOT,
		env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	const [stdout, stderr, code] = await Promise.all([
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
		proc.exited,
	]);
	return { code, stdout, stderr };
}
