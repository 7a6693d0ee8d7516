/**
 * What a call's two audit budget steps (admit, then the refund at its `done`) cost when the shared budget file
 * holds n busy lines: bench/mcp.ts leaves a line per round token that has not refilled yet, where one user
 * of one token leaves one. Alone: `bun bench/budget-lines.ts` (BUDGET_LINES=1,7,16, BUDGET_CALLS, BUDGET_ROUNDS).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, TokenBudget } from "../src/audit/budget.ts";
import { budgetFile } from "../src/audit/budget-file.ts";
import { median, rotate } from "./table.ts";

const LINES = (process.env.BUDGET_LINES ?? "1,7,16").split(",").map(Number);
const CALLS = Number(process.env.BUDGET_CALLS ?? 20_000);
const ROUNDS = Number(process.env.BUDGET_ROUNDS ?? 7);
/** A `tools/call read` start and done line, about what the bench's calls write. */
const CALL_BYTES = 515;

/** µs per call of `take` + `refund` on a budget file with `lines` busy tokens (the caller's among them). */
function perCall(lines: number): number {
	const dir = mkdtempSync(join(tmpdir(), "budget-lines-"));
	try {
		const store = budgetFile(join(dir, "a.log"), AUDIT_BURST_BYTES, undefined, () => {});
		const budget = new TokenBudget(() => Date.now(), AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, store);
		for (let i = 1; i < lines; i++) budget.charge(`bench-r${i}`, 3_000_000);
		for (let i = 0; i < 1000; i++) budget.take("caller", CALL_BYTES);
		const t0 = performance.now();
		for (let i = 0; i < CALLS; i++) {
			budget.take("caller", 2 * CALL_BYTES);
			budget.refund("caller", CALL_BYTES);
		}
		return ((performance.now() - t0) * 1000) / CALLS;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const fig = new Map<number, number[]>(LINES.map(n => [n, []]));
for (let r = 0; r < ROUNDS; r++) for (const n of rotate(LINES, r)) fig.get(n)?.push(perCall(n));
for (const [n, xs] of fig)
	console.log(
		`${String(n).padStart(3)} busy lines: ${median(xs).toFixed(1)} µs per call (rounds: ${xs.map(x => x.toFixed(1)).join(", ")})`,
	);
