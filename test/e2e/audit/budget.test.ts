/**
 * Issue 38 finding 3 (contract §19, "No token can empty the audit"), against real hosts, checked on the audit
 * files on disk (every generation): a burst of failing calls after a `read` leaves the `read` record in place;
 * two bridge processes on one audit path, rotating, lose no record.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_MAX_BYTES } from "../../../src/audit/log.ts";
import { auditGenerations } from "../../../src/audit/rotate.ts";
import { callTool, Host, openSession, withHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

type Rec = Record<string, unknown>;
const BURST_CALLS = 6000;

/** Every whole record in every generation, oldest generation first. */
const allRecords = (path: string): Rec[] =>
	auditGenerations(path)
		.reverse()
		.filter(p => existsSync(p))
		.flatMap(p => {
			const text = readFileSync(p, "utf8");
			return text.slice(0, text.lastIndexOf("\n") + 1).split("\n");
		})
		.filter(l => l !== "")
		.map(l => JSON.parse(l) as Rec);

/** Runs `n` jobs with `width` of them in flight at once. */
async function pool<T>(n: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
	const out: T[] = new Array(n);
	let next = 0;
	await Promise.all(
		Array.from({ length: width }, async () => {
			while (next < n) {
				const i = next++;
				out[i] = await job(i);
			}
		}),
	);
	return out;
}

describe("finding 3: no token can empty the audit (issue 38 item 4)", () => {
	test("a read of a secret, then 6,000 failing reads with long arguments, 8 at a time -> the read's records stay; every burst call is on disk or counted", async () => {
		await withHost({}, async host => {
			const sid = await openSession(host);
			writeFileSync(join(host.cwd, "secret.txt"), "the secret\n");
			const first = await callTool(host, sid, "read", { path: "secret.txt" });
			expect(first.status).toBe(200);
			const readRec = allRecords(host.auditPath).find(
				r => r.tool === "read" && r.phase === "done" && String(r.args).includes("secret.txt"),
			);
			expect(readRec).toBeDefined();
			const t0 = performance.now();
			// About 2.5 KB of records a call: 6,000 calls are more than twice what the 6 MiB burst pays for.
			const answers = await pool(BURST_CALLS, 8, async i => {
				// Long arguments: ten 110-character values, each under the 120 at which a value is hashed.
				const pad = Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`k${k}`, `${k}`.repeat(110)]));
				const r = await callTool(host, sid, "read", { path: `/nonexistent/${"p".repeat(100)}/${i}`, ...pad }, `b${i}`);
				return r.body as { result?: unknown; error?: { message: string; data?: { retryAfterS?: number } } };
			});
			const seconds = (performance.now() - t0) / 1000;
			// The second channel first: the read's two records are on disk, in whatever generation.
			const readLines = allRecords(host.auditPath).filter(r => r.id === readRec?.id);
			expect(readLines.map(r => r.phase)).toEqual(["start", "done"]);
			const ran = answers.filter(a => a.result !== undefined).length;
			const refusedAnswers = answers.filter(a => a.error !== undefined);
			expect(ran + refusedAnswers.length).toBe(BURST_CALLS);
			expect(refusedAnswers.length).toBeGreaterThan(0);
			expect(refusedAnswers[0]?.error?.message).toContain("audit budget is spent");
			expect(refusedAnswers[0]?.error?.data?.retryAfterS).toBeGreaterThan(0);
			// The coalesced counts are written as the budget refills: wait until they add up.
			const counted = () =>
				allRecords(host.auditPath)
					.filter(r => r.token === "owner" && typeof r.count === "number")
					.reduce((s, r) => s + (r.count as number), 0);
			await waitFor("the refusals counted on disk", () => counted() >= refusedAnswers.length, {
				timeoutMs: 60_000,
				seen: () => `${counted()} of ${refusedAnswers.length}`,
			});
			const records = allRecords(host.auditPath);
			expect(records.filter(r => r.id === readRec?.id).map(r => r.phase)).toEqual(["start", "done"]);
			const burstDone = records.filter(r => r.phase === "done" && String(r.args).includes("/nonexistent/"));
			expect(burstDone.length).toBe(ran);
			expect(counted()).toBe(refusedAnswers.length);
			expect(existsSync(`${host.auditPath}.1`)).toBe(false);
			console.log(
				`burst: ${seconds.toFixed(1)} s, ${ran} ran, ${refusedAnswers.length} refused (audit_budget), ` +
					`log ${readFileSync(host.auditPath).length} bytes`,
			);
		});
	}, 300_000);

	test("two bridge processes on one audit path, a third writer filling it past its size (16 MiB) five times -> every record of the last four rounds on disk", async () => {
		const dir = mkdtempSync(join(tmpdir(), "a2a-shared-audit-"));
		const path = join(dir, "audit.log");
		const env = { A2A_BRIDGE_AUDIT: path };
		const hosts = await Promise.all([Host.start({ env }), Host.start({ env })]);
		try {
			const sids = await Promise.all(hosts.map(h => openSession(h)));
			const answered: string[][] = [];
			for (let round = 0; round < 5; round++) {
				// Another writer (a shell's `>>`) takes the live file past the limit: the next record rotates.
				const filler = `${JSON.stringify({ id: `filler-${round}`, phase: "done", tool: "x", args: "" })}\n`;
				appendFileSync(path, filler.repeat(Math.ceil(AUDIT_MAX_BYTES / filler.length)));
				const ids = await pool(40, 8, async i => {
					const h = i % 2;
					const marker = `r${round}-h${h}-${i}`;
					const r = await callTool(hosts[h] as Host, sids[h] as string, "read", { path: `/none/${marker}` }, marker);
					expect(r.body.result).toBeDefined();
					return marker;
				});
				answered.push(ids);
			}
			const records = allRecords(path);
			const lines = (marker: string) => records.filter(r => String(r.args).endsWith(`/${marker}"}`)).length;
			for (const round of [1, 2, 3, 4]) {
				const missing = (answered[round] ?? []).filter(m => lines(m) !== 2);
				expect([round, missing]).toEqual([round, []]);
			}
			expect(existsSync(`${path}.3`)).toBe(true);
			expect(existsSync(`${path}.4`)).toBe(false);
			expect(records.filter(r => r.id === "filler-0").length).toBe(0);
		} finally {
			await Promise.all(hosts.map(h => h.stop()));
			for (const h of hosts) h.cleanup();
			rmSync(dir, { recursive: true, force: true });
		}
	}, 300_000);
});
