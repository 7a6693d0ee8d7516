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
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { initialize, type LoadResult, type LoadSpec, runLoadInChild } from "../test/helpers/loadgen.ts";
import type { BlobResult } from "./blob.ts";
import { startChild } from "./child.ts";
import { type ModernFigures, modernLoad, modernRows, writeHostCatalog } from "./modern.ts";

const SECONDS = Number(process.env.MCP_BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.MCP_BENCH_ROUNDS ?? 3);
/** Floor on requests per run, in case the warm-up that sizes the runs was slowed by other load. */
const MIN_REQUESTS = 1000;
const TARGET_VS_BARE = 0.85;
const TARGET_VS_SDK = 7;
const TARGET_OVERHEAD_MS = 0.2;
const READ_PROBE = join(import.meta.dir, "read-probe-ext.ts");
const SMALL_FILE_REL = "work/small.txt";
const SMALL_FILE_TEXT = Array.from(
	{ length: 24 },
	(_, i) => `line ${i + 1}: a small file for the read benchmark\n`,
).join("");

type Who = "bare" | "bridge" | "sdk";
const CONTENDERS: Who[] = ["bare", "bridge", "sdk"];

interface Contender {
	who: Who;
	url: string;
	token: string;
	pid: number;
}

interface Cell {
	key: string;
	label: string;
	method: "ping" | "tools/list";
	sessions: number;
}

const CELLS: Cell[] = [
	{ key: "ping-1", label: "ping, 1 session", method: "ping", sessions: 1 },
	{ key: "ping-32", label: "ping, 32 sessions", method: "ping", sessions: 32 },
	{ key: "list-1", label: "tools/list, 1 session", method: "tools/list", sessions: 1 },
	{ key: "list-32", label: "tools/list, 32 sessions", method: "tools/list", sessions: 32 },
];

const median = (xs: number[]): number => {
	const s = [...xs].sort((a, b) => a - b);
	if (s.length === 0) return Number.NaN;
	const mid = Math.floor(s.length / 2);
	return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

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

const fmtRps = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const fmtMs = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "–");
const fmtLat = (p50: number, p99: number) => `${fmtMs(p50)} / ${fmtMs(p99)}`;
const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
const TARGET_BLOB_VS_BARE = 0.85;
const TARGET_BLOB_GROWTH_MIB = 64;

/** The /blob rows: MB/s in the bare / bridge columns, the ratio to the faster bare server, host VmHWM growth. */
function blobRows(b: BlobResult): string[][] {
	const cell = (x: number) => x.toFixed(0);
	const dir = (label: string, key: "up" | "down") => {
		const bare = Math.max(b.bareSync[key], b.bareBunWrite[key]);
		const ratio = b.bridge[key] / bare;
		const target = `≥ ${TARGET_BLOB_VS_BARE} × bare`;
		return [
			`/blob ${label} 1 GiB, MB/s (median of ${b.rounds})`,
			cell(bare),
			cell(b.bridge[key]),
			"–",
			`${ratio.toFixed(2)} ×`,
			"",
			target,
			verdict(ratio >= TARGET_BLOB_VS_BARE),
		];
	};
	return [
		dir("upload", "up"),
		dir("download", "down"),
		[
			`/blob bare servers up / down MB/s: writeSync, Bun.write`,
			`${cell(b.bareSync.up)}, ${cell(b.bareBunWrite.up)} / ${cell(b.bareSync.down)}, ${cell(b.bareBunWrite.down)}`,
			"",
			"",
			"",
			"",
			"",
			"",
		],
		["local file copy (copyFileSync), MB/s", cell(b.copy), "", "", "", "", "", ""],
		[
			"host VmHWM growth over the /blob rounds, MiB",
			"",
			`+${b.hwmGrowthMiB.toFixed(1)}`,
			"",
			"",
			"",
			`≤ ${TARGET_BLOB_GROWTH_MIB} MiB`,
			verdict(b.hwmGrowthMiB <= TARGET_BLOB_GROWTH_MIB),
		],
	];
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

		// The table.
		const rows: string[][] = [];
		const med = (key: string, who: Who, f: (r: LoadResult) => number) => median((runs[key]?.[who] ?? []).map(f));
		let pingVsBare = Number.NaN;
		let pingVsSdk = Number.NaN;
		for (const cell of CELLS) {
			const rps = (who: Who) => med(cell.key, who, r => r.rps);
			const vsBare = rps("bridge") / rps("bare");
			const vsSdk = rps("bridge") / rps("sdk");
			const targeted = cell.key === "ping-32";
			if (targeted) {
				pingVsBare = vsBare;
				pingVsSdk = vsSdk;
			}
			rows.push([
				`${cell.label}: req/s`,
				fmtRps(rps("bare")),
				fmtRps(rps("bridge")),
				fmtRps(rps("sdk")),
				`${vsBare.toFixed(2)} ×`,
				`${vsSdk.toFixed(2)} ×`,
				targeted ? `≥ ${TARGET_VS_BARE} × bare; ≥ ${TARGET_VS_SDK} × SDK` : "",
				targeted ? `${verdict(vsBare >= TARGET_VS_BARE)}; ${verdict(vsSdk >= TARGET_VS_SDK)}` : "",
			]);
			const lat = (who: Who) =>
				fmtLat(
					med(cell.key, who, r => r.p50ms),
					med(cell.key, who, r => r.p99ms),
				);
			rows.push([`${cell.label}: p50 / p99 ms`, lat("bare"), lat("bridge"), lat("sdk"), "", "", "", ""]);
		}
		rows.push(["tools/list response body, bytes", `${bytes.bare}`, `${bytes.bridge}`, `${bytes.sdk}`, "", "", "", ""]);
		const httpP50 = median(readHttp.map(r => r.p50ms));
		const httpP99 = median(readHttp.map(r => r.p99ms));
		const inP50 = median(readInProc.map(r => r.p50));
		const inP99 = median(readInProc.map(r => r.p99));
		const overhead = httpP50 - inP50;
		rows.push(["tools/call read, 1 session, HTTP: p50 / p99 ms", "–", fmtLat(httpP50, httpP99), "–", "", "", "", ""]);
		rows.push(["read execute in-process: p50 / p99 ms", "–", fmtLat(inP50, inP99), "–", "", "", "", ""]);
		rows.push([
			"bridge overhead on read (HTTP p50 − in-process p50)",
			"–",
			`${overhead >= 0 ? "+" : ""}${overhead.toFixed(3)} ms`,
			"–",
			"",
			"",
			`≤ ${TARGET_OVERHEAD_MS} ms`,
			verdict(overhead <= TARGET_OVERHEAD_MS),
		]);
		rows.push([
			"tools/call echo, 1 session (SDK, context): p50 / p99 ms",
			"–",
			"–",
			fmtLat(median(echoSdk.map(r => r.p50ms)), median(echoSdk.map(r => r.p99ms))),
			"",
			"",
			"",
			"",
		]);
		const modernTable = modernRows(modern, median);
		rows.push(...modernTable.rows);
		const memCell = (who: Who) => `${mem[who].rss.toFixed(1)} / ${mem[who].hwm.toFixed(1)}`;
		if (blob) rows.push(...blobRows(blob));
		rows.push([
			"process VmRSS / VmHWM MiB, after the run",
			memCell("bare"),
			memCell("bridge"),
			memCell("sdk"),
			"",
			"",
			"",
			"",
		]);
		rows.push([
			"host VmRSS / VmHWM MiB, after boot",
			"",
			`${(hostBoot.rss / 1024).toFixed(1)} / ${(hostBoot.hwm / 1024).toFixed(1)}`,
			"",
			"",
			"",
			"",
			"",
		]);
		const header = [
			`measure (median of ${ROUNDS})`,
			"bare ceiling",
			"bridge (omp host)",
			"SDK reference",
			"bridge / bare",
			"bridge / SDK",
			"target",
			"result",
		];
		const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => (r[i] ?? "").length)));
		const line = (cells: string[]) =>
			`| ${cells.map((c, i) => (i === 0 || i >= 6 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
		console.log("");
		console.log(line(header));
		console.log(
			`|${widths.map((w, i) => (i === 0 || i >= 6 ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`,
		);
		for (const r of rows) console.log(line(r));
		console.log("");
		if (!blob) console.log("/blob rows: run `bun run bench` (it runs bench/blob.ts first and puts its figures here).");
		console.log(
			`targets: ping ×32 ≥ ${TARGET_VS_BARE} × bare: ${verdict(pingVsBare >= TARGET_VS_BARE)} (${pingVsBare.toFixed(2)}); ` +
				`ping ×32 ≥ ${TARGET_VS_SDK} × SDK: ${verdict(pingVsSdk >= TARGET_VS_SDK)} (${pingVsSdk.toFixed(2)}); ` +
				`read overhead ≤ ${TARGET_OVERHEAD_MS} ms: ${verdict(overhead <= TARGET_OVERHEAD_MS)} (${overhead.toFixed(3)} ms)`,
		);
		console.log(modernTable.line);
		console.log(`SDK reference catalog: the host's ${catalog.bytes} bytes of tools, registered through zod`);
		const perRound = (key: string, other: Who) =>
			(runs[key]?.bridge ?? [])
				.map((r, i) => (r.rps / (runs[key]?.[other][i]?.rps ?? Number.NaN)).toFixed(2))
				.join(", ");
		console.log(
			`ping ×32 per-round ratios (same round, back to back): bridge/bare ${perRound("ping-32", "bare")}; bridge/SDK ${perRound("ping-32", "sdk")}`,
		);
		console.log(
			`machine load (1-min load average, ${cpus().length} cores): ${loadStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
		);
		for (const w of warnings) console.log(`warning: ${w}`);
	} finally {
		for (const c of children) await c.stop();
		if (host) {
			await host.stop();
			host.cleanup();
		}
	}
}

if (import.meta.main) await runMcpBench();
