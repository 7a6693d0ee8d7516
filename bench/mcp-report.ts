/**
 * The MCP bench's table (bench/mcp.ts measures, this prints): medians per cell for the bare ceiling,
 * the bridge and the SDK reference, the read overhead, the 2026-07-28 rows, /blob and memory, each
 * target with its verdict.
 */
import { cpus, loadavg } from "node:os";
import type { LoadResult } from "../test/helpers/loadgen.ts";
import type { BlobResult } from "./blob.ts";
import { identityRecheckNs } from "./identity.ts";
import { type ModernFigures, modernRows } from "./modern.ts";

export type Who = "bare" | "bridge" | "sdk";
export const CONTENDERS: Who[] = ["bare", "bridge", "sdk"];

export interface Contender {
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

export const CELLS: Cell[] = [
	{ key: "ping-1", label: "ping, 1 session", method: "ping", sessions: 1 },
	{ key: "ping-32", label: "ping, 32 sessions", method: "ping", sessions: 32 },
	{ key: "list-1", label: "tools/list, 1 session", method: "tools/list", sessions: 1 },
	{ key: "list-32", label: "tools/list, 32 sessions", method: "tools/list", sessions: 32 },
];

export const median = (xs: number[]): number => {
	const s = [...xs].sort((a, b) => a - b);
	if (s.length === 0) return Number.NaN;
	const mid = Math.floor(s.length / 2);
	return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

const TARGET_VS_BARE = 0.85;
const TARGET_VS_SDK = 7;
const TARGET_OVERHEAD_MS = 0.2;
export const fmtRps = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "–");
export const fmtMs = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "–");
const fmtLat = (p50: number, p99: number) => `${fmtMs(p50)} / ${fmtMs(p99)}`;
const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
const TARGET_BLOB_VS_BARE = 0.85;
const TARGET_BLOB_GROWTH_MIB = 64;
const TARGET_PUT_VS_POST = 0.9;

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
	const putRatio = b.bridgePut.up / b.bridge.up;
	const digestRatio = b.bridgePut.down / b.bareHash;
	return [
		dir("upload", "up"),
		dir("download", "down"),
		[
			`/blob PUT 1 GiB vs POST (same run), MB/s`,
			cell(b.bridge.up),
			cell(b.bridgePut.up),
			"–",
			`${putRatio.toFixed(2)} ×`,
			"",
			`≥ ${TARGET_PUT_VS_POST} × POST`,
			verdict(putRatio >= TARGET_PUT_VS_POST),
		],
		[
			`/blob GET + Want-Repr-Digest of a file never hashed (cold), MB/s`,
			cell(b.bareHash),
			cell(b.bridgeCold),
			"–",
			`${(b.bridgeCold / b.bareHash).toFixed(2)} ×`,
			"",
			"(reported)",
			"",
		],
		[
			`/blob GET + Want-Repr-Digest after the upload vs a bare server hashing as it sends, MB/s`,
			cell(b.bareHash),
			cell(b.bridgePut.down),
			"–",
			`${digestRatio.toFixed(2)} ×`,
			"",
			`≥ ${TARGET_BLOB_VS_BARE} × bare`,
			verdict(digestRatio >= TARGET_BLOB_VS_BARE),
		],
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

export interface McpReport {
	runs: Record<string, Record<Who, LoadResult[]>>;
	readHttp: LoadResult[];
	readInProc: Array<{ p50: number; p99: number }>;
	echoSdk: LoadResult[];
	modern: ModernFigures;
	warnings: string[];
	mem: Record<Who, { rss: number; hwm: number }>;
	bytes: Record<Who, number>;
	hostBoot: { rss: number; hwm: number };
	loadStart: number;
	catalogBytes: number;
	blob: BlobResult | undefined;
	rounds: number;
}

export function printMcpReport(report: McpReport): void {
	const { runs, readHttp, readInProc, echoSdk, modern, warnings, mem, bytes, hostBoot, loadStart, blob, rounds } =
		report;
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
	rows.push([
		"identity re-check after the body (contract §16), ns per request",
		"–",
		identityRecheckNs().toFixed(1),
		"–",
		"",
		"",
		"(reported)",
		"",
	]);
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
		`measure (median of ${rounds})`,
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
	console.log(`|${widths.map((w, i) => (i === 0 || i >= 6 ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`);
	for (const r of rows) console.log(line(r));
	console.log("");
	if (!blob) console.log("/blob rows: run `bun run bench` (it runs bench/blob.ts first and puts its figures here).");
	console.log(
		`targets: ping ×32 ≥ ${TARGET_VS_BARE} × bare: ${verdict(pingVsBare >= TARGET_VS_BARE)} (${pingVsBare.toFixed(2)}); ` +
			`ping ×32 ≥ ${TARGET_VS_SDK} × SDK: ${verdict(pingVsSdk >= TARGET_VS_SDK)} (${pingVsSdk.toFixed(2)}); ` +
			`read overhead ≤ ${TARGET_OVERHEAD_MS} ms: ${verdict(overhead <= TARGET_OVERHEAD_MS)} (${overhead.toFixed(3)} ms)`,
	);
	console.log(modernTable.line);
	console.log(`SDK reference catalog: the host's ${report.catalogBytes} bytes of tools, registered through zod`);
	const perRound = (key: string, other: Who) =>
		(runs[key]?.bridge ?? []).map((r, i) => (r.rps / (runs[key]?.[other][i]?.rps ?? Number.NaN)).toFixed(2)).join(", ");
	console.log(
		`ping ×32 per-round ratios (same round, back to back): bridge/bare ${perRound("ping-32", "bare")}; bridge/SDK ${perRound("ping-32", "sdk")}`,
	);
	console.log(
		`machine load (1-min load average, ${cpus().length} cores): ${loadStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`,
	);
	for (const w of warnings) console.log(`warning: ${w}`);
}
