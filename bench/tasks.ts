/**
 * The Tasks row of `bun run bench`: a task-augmented `tools/call` (the handle, then the first
 * `tasks/get`) against the same plain 2026-07-28 `tools/call`, interleaved on one host. The tool is
 * the fixture `slow_compute` for 5 ms and the window knob is 0 ms, so every declaring call becomes a
 * task (a fast `read` often ends before even a 0 ms timer). Target: p50 within 2 × the plain p50.
 */
import { join } from "node:path";
import { Host, ROOT } from "../test/helpers/host.ts";
import { envelope } from "../test/helpers/modern.ts";
import { median } from "./mcp-report.ts";

const TARGET_TASK_P50_RATIO = 2;
const ROUNDS = 5;
const PER_ROUND = 200;
const FIXTURE = join(ROOT, "test", "fixtures", "tasks-fixture-ext.ts");
const TOOL = "slow_compute";

const declaring = () => ({
	...envelope("bench"),
	"io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
});

function post(host: Host, method: string, params: Record<string, unknown>, name: string): Promise<Response> {
	return fetch(host.url, {
		method: "POST",
		headers: host.headers({
			accept: "application/json, text/event-stream",
			"mcp-protocol-version": "2026-07-28",
			"mcp-method": method,
			"mcp-name": name,
		}),
		body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
	});
}

const pct = (xs: number[], p: number): number => {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
};

interface TaskBench {
	plainP50: number;
	taskP50: number;
	tasks: number;
	row: string[];
}

export async function runTaskBench(): Promise<TaskBench> {
	const host = await Host.start({ args: ["-e", FIXTURE], env: { A2A_BRIDGE_TASK_WINDOW_MS: "0" } });
	try {
		const args = { seconds: 0.005, label: "bench" };
		const plainP50s: number[] = [];
		const taskP50s: number[] = [];
		let tasks = 0;
		for (let round = 0; round <= ROUNDS; round++) {
			const plain: number[] = [];
			const task: number[] = [];
			for (let i = 0; i < PER_ROUND; i++) {
				let t0 = performance.now();
				const p = await post(host, "tools/call", { name: TOOL, arguments: args, _meta: envelope("bench") }, TOOL);
				await p.json();
				plain.push(performance.now() - t0);
				t0 = performance.now();
				const c = await post(host, "tools/call", { name: TOOL, arguments: args, _meta: declaring() }, TOOL);
				const created = (await c.json()) as { result: { resultType: string; taskId?: string } };
				if (created.result.resultType === "task" && created.result.taskId) {
					const id = created.result.taskId;
					await (await post(host, "tasks/get", { taskId: id, _meta: declaring() }, id)).json();
					task.push(performance.now() - t0);
					tasks++;
				}
			}
			// Round 0 warms up.
			if (round === 0) continue;
			plainP50s.push(pct(plain, 0.5));
			taskP50s.push(pct(task, 0.5));
			console.log(
				`  round ${round} tools/call ${TOOL} 5 ms plain p50 ${pct(plain, 0.5).toFixed(3)} ms, task (create + tasks/get) p50 ${pct(task, 0.5).toFixed(3)} ms`,
			);
		}
		const plainP50 = median(plainP50s);
		const taskP50 = median(taskP50s);
		const ratio = taskP50 / plainP50;
		const row = [
			"tools/call (5 ms tool) as a task: create + first tasks/get, 1 client: p50 ms",
			"–",
			taskP50.toFixed(3),
			"–",
			"",
			"",
			`≤ ${TARGET_TASK_P50_RATIO} × plain 2026-07-28 call (${plainP50.toFixed(3)}): ${ratio.toFixed(2)} × (${tasks} of ${ROUNDS * PER_ROUND + PER_ROUND} became tasks)`,
			ratio <= TARGET_TASK_P50_RATIO ? "PASS" : "MISS",
		];
		return { plainP50, taskP50, tasks, row };
	} finally {
		await host.stop();
		host.cleanup();
	}
}
