/**
 * Loaded into the benchmark host with `-e`: `/bench-read <path> <n> <tag>` runs the Main session's
 * `read` tool n times in-process, called the way src/host/bridge.ts calls it (registry lookup, then
 * `execute(id, args, signal, undefined, undefined)`), and writes
 * `BENCH-READ <tag> n=… errors=… p50=… p99=…` (ms) to stderr: the host's stdout is its rpc channel.
 */
import type { ExtensionAPI } from "@oh-my-pi/pi-coding-agent";
import { AgentRegistry } from "@oh-my-pi/pi-coding-agent";
import type { HostSession } from "../src/host/bridge.ts";

const percentile = (sorted: number[], p: number): number =>
	sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

export default function readProbe(pi: ExtensionAPI): void {
	pi.registerCommand("bench-read", {
		description: "Benchmark probe: time n in-process executions of the Main session's read tool",
		handler: async args => {
			const [path = "", nText = "0", tag = "-"] = args.trim().split(/\s+/);
			const n = Number(nText);
			const main = AgentRegistry.global().get("Main")?.session as unknown as HostSession | null | undefined;
			const tool = main?.getAllToolNames().includes("read") ? main.getToolByName("read") : undefined;
			if (!tool) {
				process.stderr.write(`BENCH-READ ${tag} failed: no read tool on a live Main session\n`);
				return;
			}
			const latencies: number[] = [];
			let errors = 0;
			let firstError = "";
			for (let i = 0; i < n; i++) {
				const id = crypto.randomUUID();
				const controller = new AbortController();
				const t0 = performance.now();
				try {
					const result = await tool.execute(id, { path }, controller.signal, undefined, undefined);
					if (result?.isError === true) {
						errors++;
						firstError ||= JSON.stringify(result.content).slice(0, 200);
					}
				} catch (err) {
					errors++;
					firstError ||= String(err);
				}
				latencies.push(performance.now() - t0);
			}
			latencies.sort((a, b) => a - b);
			process.stderr.write(
				`BENCH-READ ${tag} n=${n} errors=${errors} p50=${percentile(latencies, 50)} p99=${percentile(latencies, 99)}` +
					`${firstError ? ` first=${JSON.stringify(firstError)}` : ""}\n`,
			);
		},
	});
}
