/**
 * `bun run bench`: the /blob benchmark, then the MCP benchmark, which prints one table with both. Benchmarks
 * are not tests: they print, they do not assert.
 */
import { runBlobBench } from "./blob.ts";
import { runMcpBench } from "./mcp.ts";
import { runTaskBench } from "./tasks.ts";

console.log("== blob (details; its figures go into the table below)");
const blob = await runBlobBench();
console.log("\n== mcp");
await runMcpBench(blob);
console.log("\n== tasks (2026-07-28, io.modelcontextprotocol/tasks)");
const tasks = await runTaskBench();
console.log(`| ${tasks.row.join(" | ")} |`);
