/**
 * Issue 38 item 4 on `/blob` (contract §19): every request is admitted against its token's audit budget
 * before it moves a byte (429 `audit_budget` beyond it), a request that moved bytes is always recorded, and
 * refusals are coalesced; checked on the audit file on disk.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TokenBudget } from "../../../src/audit/budget.ts";
import { createAuditLog } from "../../../src/audit/log.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "blob-budget-"));
	mkdirSync(join(dir, "cwd"));
	writeFileSync(join(dir, "cwd", "f.txt"), "five!");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const records = (path: string): Record<string, unknown>[] =>
	existsSync(path)
		? readFileSync(path, "utf8")
				.split("\n")
				.filter(l => l !== "")
				.map(l => JSON.parse(l) as Record<string, unknown>)
		: [];

function setup(burst: number) {
	const t = { now: Date.UTC(2026, 0, 1) };
	const path = join(dir, "audit.log");
	const log = createAuditLog({
		path,
		log: () => {},
		clock: { now: () => t.now },
		budget: new TokenBudget(() => t.now, burst, 100),
	});
	const route = createBlobRoute({
		home: () => dir,
		cwd: () => join(dir, "cwd"),
		audit: r => log.write(r),
		refused: r => log.refused(r),
		admit: r => log.admit(r, 1),
		log: () => {},
		config: () => ({ blob: "write" }),
	});
	const get = (q: string) =>
		route.handle(new Request(`http://127.0.0.1:9/blob?${q}`, { method: "GET" }), routeCtx({ tokenName: "ci" }));
	return { t, path, log, get };
}

describe("/blob and the audit budget (issue 38 item 4)", () => {
	test("downloads until the budget is spent -> then 429 audit_budget with Retry-After; every 200 has its record, every 429 is counted", async () => {
		const { path, log, get } = setup(4096);
		const statuses: number[] = [];
		for (let i = 0; i < 40; i++) {
			const res = await get("path=f.txt");
			statuses.push(res.status);
			if (res.status === 429) {
				expect(res.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
				expect(((await res.json()) as { code: string }).code).toBe("audit_budget");
			} else await res.arrayBuffer();
		}
		await log.close();
		const ok = statuses.filter(s => s === 200).length;
		const refused = statuses.filter(s => s === 429).length;
		expect(ok).toBeGreaterThan(0);
		expect(refused).toBeGreaterThan(0);
		expect(ok + refused).toBe(40);
		const recs = records(path);
		expect(recs.filter(r => r.tool === "blob:read" && r.isError === false).length).toBe(ok);
		const refusals = recs.filter(r => r.isError === true || r.phase === "refused");
		const counted = refusals.reduce((s, r) => s + (typeof r.count === "number" ? r.count : 1), 0);
		expect(counted).toBe(refused);
	});

	test("500 refused downloads (404, then 429 past the budget) -> each its own record while the budget pays, then counted; the counts add up to 500", async () => {
		const { path, log, get } = setup(8192);
		// Each is admitted first (its record reserved), so past the budget the answer is 429, also counted.
		const statuses = new Set<number>();
		for (let i = 0; i < 500; i++) statuses.add((await get(`path=missing-${i}.txt`)).status);
		expect([...statuses].sort()).toEqual([404, 429]);
		await log.close();
		const recs = records(path);
		const whole = recs.filter(r => r.count === undefined);
		expect(whole.length).toBeGreaterThan(10);
		expect(whole.length).toBeLessThan(50);
		expect(whole[0]).toMatchObject({ phase: "done", tool: "blob:read", isError: true, token: "ci" });
		const counted = recs.reduce((s, r) => s + (typeof r.count === "number" ? r.count : 1), 0);
		expect(counted).toBe(500);
	});
});
