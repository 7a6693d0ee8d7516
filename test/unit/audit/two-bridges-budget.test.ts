/**
 * Attack 2, rule 4: "one token at max rate for an hour leaves every earlier record" and "two bridges on one
 * audit path lose nothing" together. Two hosts in one HOME (TUI and `npm run host`, both listed in the runtime
 * file) share the config, so one token is live on both, and the audit path; a budget per process let the
 * token write twice its hour into one log, which keeps only three generations after a record. Now shared.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, TokenBudget } from "../../../src/audit/budget.ts";
import { budgetFile } from "../../../src/audit/budget-file.ts";
import { AUDIT_MAX_BYTES, createAuditLog } from "../../../src/audit/log.ts";
import { RECORD_MAX_BYTES } from "../../../src/audit/record.ts";
import { AUDIT_GENERATIONS, auditGenerations } from "../../../src/audit/rotate.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-two-bridges-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

const idsOnDisk = (path: string): Set<string> =>
	new Set(
		auditGenerations(path)
			.filter(p => existsSync(p))
			.flatMap(p => readFileSync(p, "utf8").split("\n"))
			.filter(l => l !== "")
			.map(l => String((JSON.parse(l) as { id?: unknown }).id)),
	);

describe("attack2 rule 4: one token on two bridges sharing one audit path", () => {
	test("the real figures: every bridge on one path spends one token's one hour, which the log keeps after a record", () => {
		const hour = AUDIT_BURST_BYTES + AUDIT_RATE_BYTES_PER_S * 3600;
		const kept = AUDIT_GENERATIONS * (AUDIT_MAX_BYTES - RECORD_MAX_BYTES);
		let t = Date.UTC(2026, 0, 1);
		const path = join(dir, "audit.log");
		// Two bridges' budgets on one audit path, each taking 64 KiB a time while it can, once a second.
		const budgets = [0, 1].map(
			() =>
				new TokenBudget(
					() => t,
					AUDIT_BURST_BYTES,
					AUDIT_RATE_BYTES_PER_S,
					budgetFile(path, AUDIT_BURST_BYTES, undefined, () => {}),
				),
		);
		let spent = 0;
		for (let s = 0; s < 3600; s++) {
			for (const b of budgets) while (b.take("ci", 65536)) spent += 65536;
			t += 1000;
		}
		console.log(`one token on two bridges spent ${spent} of one hour's ${hour}; the log keeps ${kept} after a record`);
		expect(spent).toBeLessThanOrEqual(hour);
		expect(hour).toBeLessThanOrEqual(kept);
	});

	test("the real budget and log: the owner's earlier records survive one token flooding both bridges for an hour", async () => {
		const path = join(dir, "audit.log");
		let t = Date.UTC(2026, 0, 1);
		const clock = { now: () => t };
		// Two bridge processes: each its own log writer and its own (default) per-token budget, on one path.
		const bridges = [0, 1].map(() => createAuditLog({ path, log: () => {}, clock }));
		const earlier: string[] = [];
		for (let i = 0; i < 10; i++) {
			const c = { id: `owner-${i}`, sid: null, tokenName: "owner", tool: "read", args: { path: `/x-${i}` } };
			expect(bridges[0]?.calls.admit(c)).toBe(0);
			await bridges[0]?.calls.start(c);
			await bridges[0]?.calls.done({ ...c, isError: false });
			earlier.push(c.id);
		}
		const args = { pad: Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(100, "q")) };
		let ran = 0;
		for (let step = 0; step < 3600; step++) {
			t += 1000;
			for (const [b, log] of bridges.entries()) {
				for (let k = 0; k < 10_000; k++) {
					const c = { id: `c${b}-${step}-${k}`, sid: null, tokenName: "ci", client: "flood", tool: "read", args };
					if (log.calls.admit(c) !== 0) break;
					await log.calls.start(c);
					await log.calls.done({ ...c, isError: false });
					ran++;
				}
			}
		}
		for (const log of bridges) await log.close();
		const ids = idsOnDisk(path);
		console.log(`flood calls that ran: ${ran}; owner records lost: ${earlier.filter(id => !ids.has(id)).length}`);
		expect(earlier.filter(id => !ids.has(id))).toEqual([]);
	}, 300_000);
});
