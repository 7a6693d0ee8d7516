/**
 * The benchmarks' one load generator. Every HTTP figure of `bun run bench` comes from a child process
 * running one workload (`bun bench/load.ts '<json>'`, so its sockets close when it exits):
 * - `rpc`: closed-loop MCP load at n sessions (test/helpers/loadgen.ts, shared with the hardening test);
 * - `console`: console round trips through `hub` over one 2025 session (bench/console.ts);
 * - `task`: a plain 2026-07-28 `tools/call` and the same call declaring Tasks (handle + first
 *   `tasks/get`), alternating call by call;
 * - `upload` / `download`: one `/blob` transfer (a `Bun.file` body; a counting reader), timed.
 */

import { initialize, type LoadResult, type LoadSpec, runLoad } from "../test/helpers/loadgen.ts";
import { consoleRoundTrips, type HubCall } from "./console.ts";

const MODERN = "2026-07-28";
const ACCEPT = "application/json, text/event-stream";

export type Workload =
	| ({ kind: "rpc" } & LoadSpec)
	| { kind: "console"; url: string; token: string; name: string; n: number; tag: string }
	| { kind: "task"; url: string; token: string; n: number; tool: string; args: Record<string, unknown> }
	| { kind: "upload"; url: string; file: string; method: "POST" | "PUT"; headers: Record<string, string> }
	| { kind: "download"; url: string; headers: Record<string, string> };

export interface Latencies {
	ms: number[];
}
export interface TaskResult {
	plain: number[];
	task: number[];
	tasks: number;
}
export interface Transfer {
	ms: number;
	status: number;
	bytes: number;
	/** The upload's reply, or the download's `Repr-Digest` header. */
	answer: string;
}

type ResultOf<W extends Workload> = W extends { kind: "rpc" }
	? LoadResult
	: W extends { kind: "console" }
		? Latencies
		: W extends { kind: "task" }
			? TaskResult
			: Transfer;

async function rpcSession(url: string, token: string): Promise<(body: object) => Promise<Record<string, unknown>>> {
	const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: ACCEPT };
	const sid = (await initialize(url, headers, "bench")) ?? "";
	const session = { ...headers, "mcp-session-id": sid };
	await (
		await fetch(url, {
			method: "POST",
			headers: session,
			body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
		})
	).text();
	return async body =>
		(await (await fetch(url, { method: "POST", headers: session, body: JSON.stringify(body) })).json()) as Record<
			string,
			unknown
		>;
}

async function consoleLoad(w: Extract<Workload, { kind: "console" }>): Promise<Latencies> {
	const post = await rpcSession(w.url, w.token);
	let id = 0;
	const call: HubCall = async args => {
		const res = await post({
			jsonrpc: "2.0",
			id: ++id,
			method: "tools/call",
			params: { name: "hub", arguments: args },
		});
		const result = res.result as { content?: Array<{ text?: string }>; isError?: boolean } | undefined;
		if (!result || result.isError) throw new Error(`hub ${JSON.stringify(args)}: ${JSON.stringify(res).slice(0, 300)}`);
		return (result.content ?? []).map(c => c.text ?? "").join("\n");
	};
	return { ms: await consoleRoundTrips(call, w.name, w.n, w.tag) };
}

function modernPost(w: { url: string; token: string }, method: string, params: object, name: string, tasks: boolean) {
	const meta = {
		"io.modelcontextprotocol/protocolVersion": MODERN,
		"io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { "io.modelcontextprotocol/tasks": {} } } : {},
		"io.modelcontextprotocol/clientInfo": { name: "bench", version: "0" },
	};
	return fetch(w.url, {
		method: "POST",
		headers: {
			authorization: `Bearer ${w.token}`,
			"content-type": "application/json",
			accept: ACCEPT,
			"mcp-protocol-version": MODERN,
			"mcp-method": method,
			"mcp-name": name,
		},
		body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
	});
}

async function taskLoad(w: Extract<Workload, { kind: "task" }>): Promise<TaskResult> {
	const out: TaskResult = { plain: [], task: [], tasks: 0 };
	const call = { name: w.tool, arguments: w.args };
	for (let i = 0; i < w.n; i++) {
		let t0 = performance.now();
		await (await modernPost(w, "tools/call", call, w.tool, false)).json();
		out.plain.push(performance.now() - t0);
		t0 = performance.now();
		const created = (await (await modernPost(w, "tools/call", call, w.tool, true)).json()) as {
			result?: { resultType?: string; taskId?: string };
		};
		const taskId = created.result?.resultType === "task" ? created.result.taskId : undefined;
		if (taskId === undefined) continue;
		await (await modernPost(w, "tasks/get", { taskId }, taskId, true)).json();
		out.task.push(performance.now() - t0);
		out.tasks++;
	}
	return out;
}

async function transfer(w: Extract<Workload, { kind: "upload" | "download" }>): Promise<Transfer> {
	const t0 = performance.now();
	const res =
		w.kind === "upload"
			? await fetch(w.url, { method: w.method, body: Bun.file(w.file), headers: w.headers })
			: await fetch(w.url, { headers: w.headers });
	let bytes = 0;
	let answer = res.headers.get("repr-digest") ?? "";
	if (w.kind === "upload") answer = await res.text();
	else for await (const chunk of res.body ?? []) bytes += chunk.byteLength;
	return { ms: performance.now() - t0, status: res.status, bytes, answer };
}

function runHere(w: Workload): Promise<unknown> {
	switch (w.kind) {
		case "rpc":
			return runLoad(w);
		case "console":
			return consoleLoad(w);
		case "task":
			return taskLoad(w);
		default:
			return transfer(w);
	}
}

/** Runs one workload in its own process and resolves its figures. */
export async function load<W extends Workload>(w: W): Promise<ResultOf<W>> {
	const proc = Bun.spawn([process.execPath, import.meta.path, JSON.stringify(w)], { stdout: "pipe", stderr: "pipe" });
	const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
	await proc.exited;
	if (proc.exitCode !== 0) throw new Error(`load generator (${w.kind}) failed: ${err.slice(-2000)}`);
	return JSON.parse(out) as ResultOf<W>;
}

if (import.meta.main)
	process.stdout.write(JSON.stringify(await runHere(JSON.parse(process.argv[2] ?? "{}") as Workload)));
