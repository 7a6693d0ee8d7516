/** `bun run bench`: runs each benchmark in turn. Benchmarks are not tests: they print, they do not assert. */
import { runBlobBench } from "./blob.ts";
import { runMcpBench } from "./mcp.ts";

const BENCHMARKS: Array<[string, () => Promise<void>]> = [
	["mcp", runMcpBench],
	["blob", runBlobBench],
];

for (const [name, run] of BENCHMARKS) {
	console.log(`== ${name}`);
	await run();
}
