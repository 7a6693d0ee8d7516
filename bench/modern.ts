/**
 * The 2026-07-28 rows of bench/mcp.ts: the same requests as the 2025 rows, sent without a session but
 * with the `_meta` envelope and routing headers, to the same host. Target: the modern path costs no
 * more than the 2025 one (it skips the session lookup and adds header checks). Also the host's
 * catalog, written to a file, so the SDK reference serves a `tools/list` of the same size.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Host } from "../test/helpers/host.ts";
import { initialize, type LoadResult, type LoadSpec, runLoadInChild } from "../test/helpers/loadgen.ts";

/** Throughput within this share of the 2025 figure counts as "no more cost" (run-to-run noise is larger). */
export const TARGET_MODERN_RPS = 0.95;
/** p50 may exceed the 2025 p50 by this much (timer and scheduling noise at 1 client). */
export const TARGET_MODERN_P50_MS = 0.02;

/** Writes the host's `tools/list` (2025 era) to a file in its home; returns the path. */
export async function writeHostCatalog(host: Host): Promise<{ path: string; bytes: number }> {
	const headers = host.headers({ accept: "application/json, text/event-stream" });
	const sid = (await initialize(host.url, headers, "bench")) ?? "";
	const res = await fetch(host.url, {
		method: "POST",
		headers: { ...headers, "mcp-session-id": sid },
		body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
	});
	const tools = ((await res.json()) as { result: { tools: unknown[] } }).result.tools;
	const path = join(host.home, "catalog.json");
	writeFileSync(path, JSON.stringify(tools));
	return { path, bytes: JSON.stringify(tools).length };
}

export function modernLoad(
	host: Host,
	clients: number,
	total: number,
	messages: LoadSpec["messages"],
): Promise<LoadResult> {
	return runLoadInChild({
		url: host.url,
		token: host.token,
		sessions: clients,
		perSession: Math.max(1, Math.ceil(total / clients)),
		messages,
		modern: true,
	});
}

export interface ModernFigures {
	list32: { legacy: LoadResult[]; modern: LoadResult[] };
	read: { legacy: LoadResult[]; modern: LoadResult[] };
}

const fmt = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");

/** Table rows (the 8 columns of bench/mcp.ts) comparing each modern figure with its 2025 twin. */
export function modernRows(f: ModernFigures, median: (xs: number[]) => number): { rows: string[][]; line: string } {
	const rps = (rs: LoadResult[]) => median(rs.map(r => r.rps));
	const p50 = (rs: LoadResult[]) => median(rs.map(r => r.p50ms));
	const p99 = (rs: LoadResult[]) => median(rs.map(r => r.p99ms));
	const listRatio = rps(f.list32.modern) / rps(f.list32.legacy);
	const readDelta = p50(f.read.modern) - p50(f.read.legacy);
	const listOk = listRatio >= TARGET_MODERN_RPS;
	const readOk = readDelta <= TARGET_MODERN_P50_MS;
	const rows = [
		[
			"tools/list, 32 clients, 2026-07-28 (no session): req/s",
			"–",
			fmt(rps(f.list32.modern), 0),
			"–",
			"",
			"",
			`≥ ${TARGET_MODERN_RPS} × 2025 (${fmt(rps(f.list32.legacy), 0)}): ${fmt(listRatio, 2)} ×`,
			verdict(listOk),
		],
		[
			"tools/list, 32 clients, 2026-07-28: p50 / p99 ms",
			"–",
			`${fmt(p50(f.list32.modern), 3)} / ${fmt(p99(f.list32.modern), 3)}`,
			"–",
			"",
			"",
			"",
			"",
		],
		[
			"tools/call read, 1 client, 2026-07-28: p50 / p99 ms",
			"–",
			`${fmt(p50(f.read.modern), 3)} / ${fmt(p99(f.read.modern), 3)}`,
			"–",
			"",
			"",
			`p50 ≤ 2025 (${fmt(p50(f.read.legacy), 3)}) + ${TARGET_MODERN_P50_MS}: ${readDelta >= 0 ? "+" : ""}${fmt(readDelta, 3)} ms`,
			verdict(readOk),
		],
	];
	const line =
		`2026-07-28 vs 2025: tools/list ×32 ${fmt(listRatio, 2)} × req/s (${verdict(listOk)}); ` +
		`tools/call read p50 ${readDelta >= 0 ? "+" : ""}${fmt(readDelta, 3)} ms (${verdict(readOk)})`;
	return { rows, line };
}
