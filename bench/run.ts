/**
 * `bun run bench`: the `/blob` rows, then the MCP rows, printed as one table with every row's reference,
 * spread, target and verdict, and the machine's load before and after. Benchmarks are not tests: they
 * print, they do not assert. Knobs (bench/table.ts): BENCH_ROUNDS, BENCH_SECONDS, BLOB_BENCH_MIB, BENCH_TRIPS.
 */
import { cpus, loadavg } from "node:os";
import { runBlobBench } from "./blob.ts";
import { runMcpBench } from "./mcp.ts";
import { KNOBS, printTable, targetsLine } from "./table.ts";

const t0 = performance.now();
const loadBefore = loadavg()[0] ?? 0;
console.log(`bench: ${JSON.stringify(KNOBS)}`);
const blob = await runBlobBench();
const mcp = await runMcpBench();
const rows = [...mcp.rows, ...blob.rows];
console.log(`\n${printTable(rows, KNOBS.rounds)}\n`);
for (const note of [...mcp.notes, ...blob.notes]) console.log(note);
console.log(targetsLine(rows));
console.log(
	`1-minute load average (${cpus().length} cores): ${loadBefore.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end; ${((performance.now() - t0) / 60000).toFixed(1)} min`,
);
