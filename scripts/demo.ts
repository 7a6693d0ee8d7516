/**
 * `npm run demo`: both ends on one machine, no API key. It starts the headless host (`npm run host`'s
 * script) and a second omp as its MCP client, whose model is a scripted loopback endpoint that asks
 * for the host's `bash` once; then it prints each step and checks the command really ran on the host.
 * Everything lives in a throwaway HOME that is removed at the end: your ~/.omp is never read or written.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawn } from "bun";
import { errorText } from "../src/text/error-text.ts";
import { type DemoHost, envFor, homeDir, startDemoHost } from "./demo-host.ts";
import { modelsYml, type Reply, startFakeModel } from "./scripted-model.ts";

const ROOT = resolve(import.meta.dir, "..");
const OMP_CLI = join(ROOT, "node_modules", "@oh-my-pi", "pi-coding-agent", "dist", "cli.js");
const CALLER_MS = 120_000;

const say = (line: string): void => {
	process.stdout.write(`${line}\n`);
};
const oneLine = (text: string, max = 160): string => {
	const flat = JSON.stringify(text.trim());
	return flat.length > max ? `${flat.slice(0, max)}…"` : flat;
};

/** The tool_result text the caller's omp sent back to its model, if this request carries one. */
function toolResult(body: Record<string, unknown>): string | undefined {
	const last = (body.messages as Array<{ content?: unknown }> | undefined)?.at(-1)?.content;
	if (!Array.isArray(last)) return undefined;
	const block = last.find((b: { type?: string }) => b.type === "tool_result") as { content?: unknown } | undefined;
	if (!block) return undefined;
	return typeof block.content === "string" ? block.content : JSON.stringify(block.content);
}

async function main(): Promise<number> {
	const base = mkdtempSync(join(tmpdir(), "a2a-demo-"));
	const hostHome = homeDir(base, "host");
	const callerHome = homeDir(base, "caller");
	const marker = `a2a-demo-${process.pid}-${Date.now().toString(36)}`;
	const command = `echo ${marker} | tee a2a-demo.txt; echo "ran in $PWD as $(id -un)"`;

	say(`demo: 1/4 host: npm run host in a throwaway HOME (${hostHome}), serving ${join(hostHome, "work")}`);
	let host: DemoHost | undefined;
	const model = startFakeModel([{ tool: "mcp__omp_host_bash", input: { command } }], { text: "All done." }, onModel);
	let requests = 0;
	let resultText = "";
	function onModel(body: Record<string, unknown>, reply: Reply): void {
		requests++;
		const result = toolResult(body);
		if (result !== undefined) {
			resultText = result;
			say(`demo:     the host's answer reached the caller's model: ${oneLine(result)}`);
		}
		if ("tool" in reply)
			say(`demo:     model request ${requests} -> call ${reply.tool} ${JSON.stringify(reply.input)}`);
		else say(`demo:     model request ${requests} -> reply ${oneLine(reply.text)}`);
	}

	let ok = false;
	try {
		host = await startDemoHost(hostHome);
		const { url, secret } = host;
		say(`demo:     the bridge serves ${url} (token ${secret.slice(0, 6)}…, from the host's a2a-bridge.json)`);

		say(`demo: 2/4 scripted model on ${model.url} (no API key): it asks once for mcp__omp_host_bash, then says done`);
		writeFileSync(join(callerHome, ".omp", "agent", "models.yml"), modelsYml(model.url, "scripted", "scripted/demo"));
		const mcp = { mcpServers: { "omp-host": { type: "http", url, headers: { Authorization: `Bearer ${secret}` } } } };
		writeFileSync(join(callerHome, ".omp", "agent", "mcp.json"), JSON.stringify(mcp, null, "\t"));

		say(`demo: 3/4 caller: a second omp (-p, print mode) whose ~/.omp/agent/mcp.json names the host (${callerHome})`);
		const caller = spawn({
			cmd: [process.execPath, "--no-install", OMP_CLI, "-p", "--no-session", "Run the command on the host."],
			cwd: join(callerHome, "work"),
			env: envFor(callerHome),
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
		});
		const timer = setTimeout(() => caller.kill("SIGKILL"), CALLER_MS);
		const [code, out, err] = await Promise.all([
			caller.exited,
			new Response(caller.stdout).text(),
			new Response(caller.stderr).text(),
		]);
		clearTimeout(timer);
		say(`demo:     caller exited ${code ?? caller.signalCode}, printing ${oneLine(out)}`);
		if (code !== 0) say(`demo:     caller stderr: ${oneLine(err, 2000)}`);

		let onDisk = "";
		try {
			onDisk = readFileSync(join(hostHome, "work", "a2a-demo.txt"), "utf8").trim();
		} catch {}
		const audit = readFileSync(join(hostHome, ".omp", "agent", "a2a-bridge.log"), "utf8")
			.trim()
			.split("\n");
		const phases = audit.map(l => JSON.parse(l) as { phase?: string; tool?: string }).map(r => `${r.phase} ${r.tool}`);
		say(`demo:     the host's audit log (a2a-bridge.log): ${phases.join(", ")}`);
		ok = code === 0 && resultText.includes(marker) && onDisk === marker;
		say(
			`demo: 4/4 check: host's work/a2a-demo.txt ${onDisk === marker ? "holds" : "does NOT hold"} ${marker}; ` +
				`the answer ${resultText.includes(marker) ? "carried" : "did NOT carry"} it`,
		);
	} finally {
		model.stop();
		if (host) say(`demo: host stopped: ${(await host.stop()).replace(/^a2a host: /, "")}`);
		rmSync(base, { recursive: true, force: true });
	}
	say(ok ? "demo: ok: a second omp called the host's bash over MCP" : "demo: FAILED (see above)");
	return ok ? 0 : 1;
}

main().then(
	code => process.exit(code),
	err => {
		process.stderr.write(`demo: ${errorText(err)}\n`);
		process.exit(1);
	},
);
