/**
 * MCP request path (issue 8, point 1). In one run: the real omp host with the bridge, a reference
 * server on the official `@modelcontextprotocol/sdk` (bench/sdk-reference.ts) and a bare Bun server
 * that answers the same JSON-RPC with no logic (bench/bare-server.ts, the ceiling of this machine
 * and load generator), all driven by test/helpers/loadgen.ts with the same request counts. Every
 * server is warmed up first; then ROUNDS interleaved rounds (the order of the contenders rotates from
 * cell to cell); the table shows medians. Also: `tools/call read` of a small file at 1 session through
 * the bridge next to the same tool's in-process `execute` (bench/read-probe-ext.ts, loaded with -e),
 * and the host's VmRSS / VmHWM. Targets: ping at 32 sessions ≥ 0.85 × bare and ≥ 7 × SDK; bridge
 * overhead on `tools/call read` (HTTP p50 − in-process p50) ≤ 0.2 ms at 1 session. The SDK reference
 * serves the host's own catalog (same `tools/list` size); bench/modern.ts adds the 2026-07-28 rows.
 * Env: MCP_BENCH_SECONDS (target length of the fastest contender's run per cell, default 2),
 * MCP_BENCH_ROUNDS (default 3).
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { initialize, type LoadResult, type LoadSpec, runLoadInChild } from "../test/helpers/loadgen.ts";
import type { BlobResult } from "./blob.ts";
import { startChild } from "./child.ts";
import { CELLS, CONTENDERS, type Contender, fmtMs, fmtRps, printMcpReport, type Who } from "./mcp-report.ts";
import { type ModernFigures, modernLoad, writeHostCatalog } from "./modern.ts";

const SECONDS = Number(process.env.MCP_BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.MCP_BENCH_ROUNDS ?? 3);
/** Floor on requests per run, in case the warm-up that sizes the runs was slowed by other load. */
const MIN_REQUESTS = 1000;
const READ_PROBE = join(import.meta.dir, "read-probe-ext.ts");
const SMALL_FILE_REL = "work/small.txt";
const SMALL_FILE_TEXT = Array.from(
	{ length: 24 },
	(_, i) => `line ${i + 1}: a small file for the read benchmark\n`,
).join("");

const procStatusKiB = (pid: number, field: "VmRSS" | "VmHWM"): number => {
	const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
	return Number(m[1]);
};

function load(c: Contender, sessions: number, total: number, messages: LoadSpec["messages"]): Promise<LoadResult> {
	return runLoadInChild({
		url: c.url,
		token: c.token,
		sessions,
		perSession: Math.max(1, Math.ceil(total / sessions)),
		messages,
	});
}

/** Runs `/bench-read` in the host and parses the line it writes to stderr. */
async function inProcessRead(host: Host, path: string, n: number): Promise<{ p50: number; p99: number }> {
	const tag = crypto.randomUUID();
	await host.command(`/bench-read ${path} ${n} ${tag}`).catch(() => {});
	const re = new RegExp(`^BENCH-READ ${tag} (.*)$`, "m");
	const deadline = Date.now() + 120_000;
	for (;;) {
		const line = re.exec(host.stderr)?.[1];
		if (line !== undefined) {
			const field = (name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
			const errors = Number(field("errors"));
			if (line.startsWith("failed") || errors !== 0) throw new Error(`in-process read: ${line}`);
			return { p50: Number(field("p50")), p99: Number(field("p99")) };
		}
		if (Date.now() > deadline) throw new Error(`no BENCH-READ line from the host; stderr: ${host.stderr.slice(-2000)}`);
		await Bun.sleep(20);
	}
}

async function bodyBytes(c: Contender, method: string): Promise<number> {
	const base = {
		authorization: `Bearer ${c.token}`,
		"content-type": "application/json",
		accept: "application/json, text/event-stream",
	};
	const sid = (await initialize(c.url, base, "bench")) ?? "";
	const res = await fetch(c.url, {
		method: "POST",
		headers: { ...base, "mcp-session-id": sid },
		body: JSON.stringify({ jsonrpc: "2.0", id: 1, method }),
	});
	return (await res.arrayBuffer()).byteLength;
}

/** Prints the combined table; `blob` adds the /blob rows (bench/blob.ts runs first under `bun run bench`). */
export async function runMcpBench(blob?: BlobResult): Promise<void> {
	let host: Host | undefined;
	const children: Array<{ stop(): Promise<void> }> = [];
	try {
		console.log(`mcp bench: ${ROUNDS} interleaved rounds, ~${SECONDS} s for the fastest contender per cell, medians`);
		const loadStart = loadavg()[0] ?? 0;
		host = await Host.start({ args: ["-e", READ_PROBE], files: { [SMALL_FILE_REL]: SMALL_FILE_TEXT } });
		const smallFile = join(host.home, SMALL_FILE_REL);
		const sdkToken = crypto.randomUUID() + crypto.randomUUID();
		const bareProc = await startChild("bare-server.ts");
		children.push(bareProc);
		const catalog = await writeHostCatalog(host);
		const sdkProc = await startChild("sdk-reference.ts", { SDK_REF_TOKEN: sdkToken, SDK_REF_CATALOG: catalog.path });
		children.push(sdkProc);
		const by: Record<Who, Contender> = {
			bare: { who: "bare", url: bareProc.url, token: sdkToken, pid: bareProc.pid },
			bridge: { who: "bridge", url: host.url, token: host.token, pid: host.proc.pid },
			sdk: { who: "sdk", url: sdkProc.url, token: sdkToken, pid: sdkProc.pid },
		};
		const hostBoot = { rss: procStatusKiB(host.proc.pid, "VmRSS"), hwm: procStatusKiB(host.proc.pid, "VmHWM") };
		const readMsg: LoadSpec["messages"] = [
			{ method: "tools/call", params: { name: "read", arguments: { path: smallFile } } },
		];
		const echoMsg: LoadSpec["messages"] = [
			{ method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } },
		];

		// Warm-up: two passes of every cell on every contender; the bare server's second pass sizes the runs.
		const counts: Record<string, number> = {};
		for (let pass = 0; pass < 2; pass++) {
			for (const cell of CELLS) {
				const total = cell.sessions === 1 ? 1500 : 32 * 120;
				for (const who of CONTENDERS) {
					const r = await load(by[who], cell.sessions, total, [{ method: cell.method }]);
					if (r.errors > 0) throw new Error(`warm-up ${cell.label} on ${who}: ${r.errors} errors, ${r.firstError}`);
					if (pass === 1 && who === "bare")
						counts[cell.key] = Math.ceil(Math.max(MIN_REQUESTS, SECONDS * r.rps) / cell.sessions) * cell.sessions;
				}
			}
			const r = await load(by.bridge, 1, 800, readMsg);
			if (r.errors > 0) throw new Error(`warm-up tools/call read: ${r.errors} errors, ${r.firstError}`);
			for (const m of [
				await modernLoad(host, 1, 800, readMsg),
				await modernLoad(host, 32, 32 * 120, [{ method: "tools/list" }]),
			])
				if (m.errors > 0) throw new Error(`warm-up 2026-07-28: ${m.errors} errors, ${m.firstError}`);
			if (pass === 1) counts.read = Math.max(MIN_REQUESTS, Math.ceil(SECONDS * r.rps));
			await inProcessRead(host, smallFile, 800);
			await load(by.sdk, 1, 800, echoMsg);
		}
		console.log(
			`requests per run (same for every contender): ${CELLS.map(c => `${c.label} ${counts[c.key]}`).join(", ")}, tools/call read ${counts.read}`,
		);

		const runs: Record<string, Record<Who, LoadResult[]>> = {};
		for (const cell of CELLS) runs[cell.key] = { bare: [], bridge: [], sdk: [] };
		const readHttp: LoadResult[] = [];
		const readInProc: Array<{ p50: number; p99: number }> = [];
		const echoSdk: LoadResult[] = [];
		const modern: ModernFigures = { list32: { legacy: [], modern: [] }, read: { legacy: readHttp, modern: [] } };
		const warnings: string[] = [];
		let turn = 0;
		for (let round = 1; round <= ROUNDS; round++) {
			for (const cell of CELLS) {
				// Rotate who goes first, so that drift on a shared machine hits every contender alike.
				const order = CONTENDERS.map((_, i) => CONTENDERS[(i + turn) % CONTENDERS.length] as Who);
				turn++;
				for (const who of order) {
					const r = await load(by[who], cell.sessions, counts[cell.key] ?? 0, [{ method: cell.method }]);
					runs[cell.key]?.[who].push(r);
					if (r.errors > 0) warnings.push(`round ${round} ${cell.label} ${who}: ${r.errors} errors, ${r.firstError}`);
					console.log(
						`  round ${round} ${cell.label.padEnd(24)} ${who.padEnd(6)} ${fmtRps(r.rps).padStart(6)} req/s  p50 ${fmtMs(r.p50ms)}  p99 ${fmtMs(r.p99ms)} ms  (${r.requests} in ${r.seconds.toFixed(2)} s)`,
					);
				}
			}
			// 2026-07-28 right after its 2025 twin: the same request count on the same host.
			const ml = await modernLoad(host, 32, counts["list-32"] ?? 0, [{ method: "tools/list" }]);
			modern.list32.legacy.push(runs["list-32"]?.bridge.at(-1) as LoadResult);
			modern.list32.modern.push(ml);
			if (ml.errors > 0) warnings.push(`round ${round} tools/list 2026-07-28: ${ml.errors} errors, ${ml.firstError}`);
			console.log(
				`  round ${round} tools/list ×32 2026-07-28   ${fmtRps(ml.rps).padStart(6)} req/s  p50 ${fmtMs(ml.p50ms)}`,
			);
			const n = counts.read ?? 0;
			const viaHttp = async () => {
				const r = await load(by.bridge, 1, n, readMsg);
				readHttp.push(r);
				if (r.errors > 0) warnings.push(`round ${round} tools/call read: ${r.errors} errors, ${r.firstError}`);
				console.log(
					`  round ${round} tools/call read via HTTP     p50 ${fmtMs(r.p50ms)}  p99 ${fmtMs(r.p99ms)} ms  (${r.requests} in ${r.seconds.toFixed(2)} s)`,
				);
				const m = await modernLoad(host as Host, 1, n, readMsg);
				modern.read.modern.push(m);
				if (m.errors > 0)
					warnings.push(`round ${round} tools/call read 2026-07-28: ${m.errors} errors, ${m.firstError}`);
				console.log(`  round ${round} tools/call read 2026-07-28  p50 ${fmtMs(m.p50ms)}  p99 ${fmtMs(m.p99ms)} ms`);
			};
			const inProc = async () => {
				const r = await inProcessRead(host as Host, smallFile, n);
				readInProc.push(r);
				console.log(`  round ${round} read execute in-process     p50 ${fmtMs(r.p50)}  p99 ${fmtMs(r.p99)} ms  (${n})`);
			};
			if (round % 2 === 1) {
				await viaHttp();
				await inProc();
			} else {
				await inProc();
				await viaHttp();
			}
			const e = await load(by.sdk, 1, n, echoMsg);
			echoSdk.push(e);
			console.log(`  round ${round} SDK tools/call echo          p50 ${fmtMs(e.p50ms)}  p99 ${fmtMs(e.p99ms)} ms`);
		}
		const mem = Object.fromEntries(
			CONTENDERS.map(who => [
				who,
				{ rss: procStatusKiB(by[who].pid, "VmRSS") / 1024, hwm: procStatusKiB(by[who].pid, "VmHWM") / 1024 },
			]),
		) as Record<Who, { rss: number; hwm: number }>;
		const bytes = Object.fromEntries(
			await Promise.all(CONTENDERS.map(async who => [who, await bodyBytes(by[who], "tools/list")] as const)),
		) as Record<Who, number>;

		printMcpReport({
			runs,
			readHttp,
			readInProc,
			echoSdk,
			modern,
			warnings,
			mem,
			bytes,
			hostBoot,
			loadStart,
			catalogBytes: catalog.bytes,
			blob,
			rounds: ROUNDS,
		});
	} finally {
		for (const c of children) await c.stop();
		if (host) {
			await host.stop();
			host.cleanup();
		}
	}
}

if (import.meta.main) await runMcpBench();
