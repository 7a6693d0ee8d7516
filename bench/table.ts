/**
 * What every benchmark row shares: per-round figures of the bridge and of the reference that does the
 * same work, reduced to a median with its spread (min–max over the rounds), the comparison, the target
 * and its verdict for this run. bench/run.ts prints all rows as one table.
 */

/** One figure per round; rounds interleave the two sides, so load from elsewhere hits both alike. */
export interface Row {
	measure: string;
	unit: "req/s" | "MB/s" | "ms" | "MiB" | "B";
	bridge: number[];
	/** What the reference does, in a few words ("bare: stage, hash, fsync, rename"). */
	refName: string;
	ref: number[];
	/**
	 * `ratio`: bridge / reference; `diff`: bridge − reference; `none`: the bridge's figure alone is judged
	 * (a budget, such as memory growth).
	 */
	compare: "ratio" | "diff" | "none";
	target?: { op: ">=" | "<="; value: number; label: string };
}

export const median = (xs: readonly number[]): number => {
	const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
	if (s.length === 0) return Number.NaN;
	const mid = Math.floor(s.length / 2);
	return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** A `percentile` of a sorted or unsorted sample (nearest rank below). */
export const percentile = (xs: readonly number[], p: number): number => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number);
};

const digits = (unit: Row["unit"]): number => (unit === "ms" ? 3 : unit === "MiB" ? 1 : 0);
const num = (x: number, d: number): string => (Number.isFinite(x) ? x.toFixed(d) : "–");

/** `median (min–max)`, or the one value when there is one round. */
export function spread(xs: readonly number[], d: number): string {
	const f = xs.filter(Number.isFinite);
	if (f.length === 0) return "–";
	if (f.length === 1) return num(f[0] as number, d);
	return `${num(median(f), d)} (${num(Math.min(...f), d)}–${num(Math.max(...f), d)})`;
}

/** Per-round comparisons of a row (same round, back to back). */
function perRound(row: Row): number[] {
	return row.bridge.map((b, i) => {
		const r = row.ref[i] ?? Number.NaN;
		return row.compare === "diff" ? b - r : b / r;
	});
}

/** The headline comparison: of the two medians (what the verdict judges). */
export function headline(row: Row): number {
	const b = median(row.bridge);
	if (row.compare === "none") return b;
	const r = median(row.ref);
	return row.compare === "diff" ? b - r : b / r;
}

export function verdict(row: Row): "met" | "missed" | "" {
	if (!row.target) return "";
	const x = headline(row);
	const ok = row.target.op === ">=" ? x >= row.target.value : x <= row.target.value;
	return ok ? "met" : "missed";
}

function compareCell(row: Row): string {
	if (row.compare === "none") return "";
	const x = headline(row);
	const rounds = perRound(row).filter(Number.isFinite);
	const lo = Math.min(...rounds);
	const hi = Math.max(...rounds);
	if (row.compare === "diff") {
		const sign = (v: number) => `${v >= 0 ? "+" : ""}${num(v, 3)}`;
		return `${sign(x)} ms${rounds.length > 1 ? ` (${sign(lo)}…${sign(hi)})` : ""}`;
	}
	return `${num(x, 2)} ×${rounds.length > 1 ? ` (${num(lo, 2)}–${num(hi, 2)})` : ""}`;
}

export function printTable(rows: readonly Row[], rounds: number): string {
	const header = [
		`measure (median of ${rounds} rounds, min–max)`,
		"bridge",
		"reference doing the same work",
		"reference",
		"bridge vs reference",
		"target",
		"result",
	];
	const cells = rows.map(r => [
		`${r.measure}, ${r.unit}`,
		spread(r.bridge, digits(r.unit)),
		r.refName,
		spread(r.ref, digits(r.unit)),
		compareCell(r),
		r.target?.label ?? "",
		verdict(r),
	]);
	const widths = header.map((h, i) => Math.max(h.length, ...cells.map(c => (c[i] ?? "").length)));
	const right = new Set([1, 3, 4]);
	const line = (c: string[]) =>
		`| ${c.map((x, i) => (right.has(i) ? x.padStart(widths[i] ?? 0) : x.padEnd(widths[i] ?? 0))).join(" | ")} |`;
	const rule = `|${widths.map((w, i) => (right.has(i) ? `${"-".repeat(w + 1)}:` : "-".repeat(w + 2))).join("|")}|`;
	return [line(header), rule, ...cells.map(line)].join("\n");
}

/** The rows with a target and how each went, in one line. */
export function targetsLine(rows: readonly Row[]): string {
	const judged = rows.filter(r => r.target);
	const met = judged.filter(r => verdict(r) === "met");
	const missed = judged.filter(r => verdict(r) === "missed");
	return `targets: ${met.length} met, ${missed.length} missed${missed.length ? ` (${missed.map(r => `${r.measure} vs ${r.refName}`).join("; ")})` : ""}`;
}

/** Rotates `xs` by `turn`: each round starts with another contender. */
export const rotate = <T>(xs: readonly T[], turn: number): T[] => xs.map((_, i) => xs[(i + turn) % xs.length] as T);

/** The knobs of `bun run bench` (defaults: the full run; small values for a quick look on a busy machine). */
export const KNOBS = {
	/** Interleaved rounds per cell (at least 3 for a median with a spread; 5 keep one noisy round from deciding). */
	rounds: Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5)),
	/** Target length of one MCP load run, per contender. */
	seconds: Number(process.env.BENCH_SECONDS ?? 1.5),
	/** Size of every `/blob` transfer. */
	blobMiB: Number(process.env.BLOB_BENCH_MIB ?? 1024),
	/** Console round trips and task pairs per round and side. */
	trips: Number(process.env.BENCH_TRIPS ?? 40),
};

/** A row, in the order the table prints it. */
export const row = (
	measure: string,
	unit: Row["unit"],
	bridge: number[],
	refName: string,
	ref: number[],
	compare: Row["compare"],
	target?: Row["target"],
): Row => ({ measure, unit, bridge, refName, ref, compare, ...(target ? { target } : {}) });

/** Targets: a ratio floor (`≥ 0.9 ×`), a ratio or value ceiling (`≤ 2 ×`, `≤ 64 MiB`), a difference ceiling (`≤ +0.2 ms`). */
export const atLeast = (value: number): Row["target"] => ({ op: ">=", value, label: `≥ ${value} ×` });
export const atMost = (value: number, label: string): Row["target"] => ({ op: "<=", value, label });
