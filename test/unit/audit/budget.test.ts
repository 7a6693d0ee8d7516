/**
 * Issue 38 item 4 (contract §19, "No token can empty the audit"): the per-token budget, and a generated
 * mix of record kinds, tokens, sizes and rates on an injected clock through the real log into a temp dir,
 * read back from disk across generations (the second channel).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, TokenBudget } from "../../../src/audit/budget.ts";
import { AUDIT_MAX_BYTES, createAuditLog } from "../../../src/audit/log.ts";
import { RECORD_MAX_BYTES } from "../../../src/audit/record.ts";
import { AUDIT_GENERATIONS, auditGenerations } from "../../../src/audit/rotate.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-budget-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

/** Every record on disk, oldest generation first. */
const onDisk = (path: string): Record<string, unknown>[] =>
	auditGenerations(path)
		.reverse()
		.filter(p => existsSync(p))
		.flatMap(p => readFileSync(p, "utf8").split("\n"))
		.filter(l => l !== "")
		.map(l => JSON.parse(l) as Record<string, unknown>);

/** Bytes written after a record before it can be dropped: three generations, each filled to within a record. */
const kept = (maxBytes: number): number => AUDIT_GENERATIONS * (maxBytes - RECORD_MAX_BYTES);

describe("the figures (docs/security.md)", () => {
	test("one token at its maximum rate for an hour writes less than the log keeps after a record", () => {
		const hour = AUDIT_BURST_BYTES + AUDIT_RATE_BYTES_PER_S * 3600;
		expect(hour).toBe(35_782_656);
		expect(kept(AUDIT_MAX_BYTES)).toBe(50_307_072);
		// What is left in that hour for every other token together.
		expect(kept(AUDIT_MAX_BYTES) - hour).toBe(14_524_416);
		// Sustained, a record is dropped no sooner than this many seconds after it.
		expect((kept(AUDIT_MAX_BYTES) - AUDIT_BURST_BYTES) / AUDIT_RATE_BYTES_PER_S).toBe(5373);
		// A typical call's two records are 400–800 bytes: at least 10 calls a second, sustained.
		expect(AUDIT_RATE_BYTES_PER_S / 800).toBeGreaterThanOrEqual(10);
	});
});

describe("one token at its maximum rate for an hour (the real budget and log)", () => {
	test("every kind, 10 tries a second for 3,600 s -> every earlier record of every token in place; the token wrote at most its hour", async () => {
		const path = join(dir, "audit.log");
		let t = Date.UTC(2026, 0, 1);
		const log = createAuditLog({ path, log: () => {}, clock: { now: () => t } });
		const earlier: string[] = [];
		for (const token of ["owner", "ci"]) {
			for (let i = 0; i < 20; i++) {
				const c = { id: `${token}-${i}`, sid: null, tokenName: token, tool: "read", args: { path: `/secret-${i}` } };
				expect(log.calls.admit(c)).toBe(0);
				await log.calls.start(c);
				await log.calls.done({ ...c, isError: false });
				earlier.push(c.id);
			}
		}
		const before = onDisk(path).length;
		const args = { pad: Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(100, "q")) };
		let ran = 0;
		for (let step = 0; step < 36_000; step++) {
			t += 100;
			const who = { sid: null, tokenName: "x", client: "flood", args };
			const c = { ...who, id: `c${step}`, tool: "read" };
			if (log.calls.admit(c) === 0) {
				await log.calls.start(c);
				await log.calls.done({ ...c, isError: true });
				ran++;
			}
			log.calls.refused({ ...who, id: `r${step}`, tool: "nope", reason: "not exposed" });
			const blob = { ...who, id: `b${step}`, phase: "done" as const, tool: "blob:read", isError: false };
			if (log.admit(blob, 1) === 0) log.write(blob);
			log.refused({ ...blob, id: `f${step}`, isError: true, error: "not found" });
		}
		await log.close();
		const records = onDisk(path);
		const ids = new Set(records.map(r => String(r.id)));
		expect(earlier.filter(id => !ids.has(id))).toEqual([]);
		expect(ran).toBeGreaterThan(0);
		const written = auditGenerations(path)
			.filter(p => existsSync(p))
			.reduce((s, p) => s + readFileSync(p).length, 0);
		expect(records.length).toBeGreaterThan(before);
		// What the flood wrote: at most a burst and an hour's refill, and the flush's last count records.
		expect(written).toBeLessThan(AUDIT_BURST_BYTES + AUDIT_RATE_BYTES_PER_S * 3600 + 2 * RECORD_MAX_BYTES + 40 * 400);
	}, 120_000);
});

/** A bucket's level, read back through the wait it implies for a whole burst (exact for whole-byte levels). */
const levelOf = (b: TokenBudget, token: string, burst: number, ratePerS: number): number =>
	burst - (b.waitMs(token, burst) * ratePerS) / 1000;

describe("TokenBudget", () => {
	test("take within the level; charge below zero; refill at the rate up to the burst; a full bucket is forgotten", () => {
		let t = 0;
		const b = new TokenBudget(() => t, 1000, 100);
		expect(b.take("a", 600)).toBe(true);
		expect(b.take("a", 600)).toBe(false);
		expect(levelOf(b, "a", 1000, 100)).toBe(400);
		b.charge("a", 900);
		expect(levelOf(b, "a", 1000, 100)).toBe(-500);
		expect(b.waitMs("a", 100)).toBe(6000);
		t += 6000;
		expect(b.take("a", 100)).toBe(true);
		expect(levelOf(b, "b", 1000, 100)).toBe(1000);
		t += 60_000;
		expect(levelOf(b, "a", 1000, 100)).toBe(1000);
		b.refund("a", 50);
		expect(levelOf(b, "a", 1000, 100)).toBe(1000);
	});

	test("an admitted call is charged the bytes of its two lines on disk, no more (the reservation's rest comes back)", async () => {
		const t = Date.UTC(2026, 0, 1);
		const budget = new TokenBudget(() => t, 100_000, 1);
		const path = join(dir, "audit.log");
		const log = createAuditLog({ path, log: () => {}, clock: { now: () => t }, budget });
		const c = { id: "c1", sid: null, tokenName: "ci", tool: "read", args: { path: "/etc/hosts" } };
		expect(log.calls.admit(c)).toBe(0);
		expect(levelOf(budget, "ci", 100_000, 1)).toBeLessThan(100_000);
		await log.calls.start(c);
		await log.calls.done({ ...c, isError: false });
		await log.close();
		expect(levelOf(budget, "ci", 100_000, 1)).toBe(100_000 - readFileSync(path).length);
	});

	test("a clock that goes back never adds bytes", () => {
		let t = 10_000;
		const b = new TokenBudget(() => t, 1000, 100);
		b.charge("a", 1000);
		t = 0;
		expect(levelOf(b, "a", 1000, 100)).toBe(0);
	});
});

type Op = { kind: "call" | "callRefused" | "blob" | "blobRefused" | "event"; token: string; pad: number; dt: number };

const TOKENS = ["owner", "ci", "laptop"];
const opArb: fc.Arbitrary<Op> = fc.record({
	kind: fc.constantFrom("call", "call", "callRefused", "blob", "blobRefused", "event"),
	token: fc.constantFrom(...TOKENS),
	pad: fc.integer({ min: 0, max: 12 }),
	dt: fc.integer({ min: 0, max: 2000 }),
}) as fc.Arbitrary<Op>;

/** The scaled log: 64 KiB generations, and a budget that fits three tokens at full rate for the whole run. */
const MAX_BYTES = 64 * 1024;
const BURST = 16 * 1024;
const RATE = 32;

describe("generated record mixes (issue 38 item 9, class 3)", () => {
	test("every record of work that ran is on disk; coalesced counts add up to what was refused", async () => {
		let run = 0;
		await fc.assert(
			fc.asyncProperty(fc.array(opArb, { minLength: 100, maxLength: 600, size: "max" }), async ops => {
				const path = join(dir, `audit-${run++}.log`);
				let t = Date.UTC(2026, 0, 1);
				const budget = new TokenBudget(() => t, BURST, RATE);
				const seconds = ops.reduce((s, o) => s + o.dt, 0) / 1000;
				expect((BURST + seconds * RATE) * TOKENS.length).toBeLessThan(kept(MAX_BYTES));
				const log = createAuditLog({ path, log: () => {}, maxBytes: MAX_BYTES, clock: { now: () => t }, budget });
				const ran = new Map<string, number>();
				const refused = new Map<string, number>(TOKENS.map(n => [n, 0]));
				const refuse = (token: string) => refused.set(token, (refused.get(token) ?? 0) + 1);
				let n = 0;
				for (const op of ops) {
					t += op.dt;
					const id = `${op.kind}-${n++}`;
					// Up to about 1.3 KiB of arguments: 12 leaves of 100 characters (kept, not hashed).
					const args = { pad: Array.from({ length: op.pad }, (_, i) => `${i}`.padEnd(100, "x")) };
					const who = { id, sid: null, tokenName: op.token, client: "gen", args };
					if (op.kind === "call" || op.kind === "callRefused") {
						const c = { ...who, tool: "read" };
						if ((log.calls.admit?.(c) ?? 0) > 0) refuse(op.token);
						else if (op.kind === "callRefused") {
							log.calls.refused({ ...c, reason: "not exposed" });
							refuse(op.token);
						} else {
							await log.calls.start(c);
							await log.calls.done({ ...c, isError: true });
							ran.set(id, 2);
						}
					} else if (op.kind === "blob" || op.kind === "blobRefused") {
						const rec = { ...who, phase: "done" as const, tool: "blob:read", isError: false };
						const fail = { ...rec, isError: true, error: "not found" };
						if ((log.admit?.(rec, 1) ?? 0) > 0) {
							(log.refused ?? log.write)(fail);
							refuse(op.token);
						} else if (op.kind === "blobRefused") {
							(log.refused ?? log.write)(fail);
							refuse(op.token);
						} else {
							log.write(rec);
							ran.set(id, 1);
						}
					} else {
						log.write({ ...who, phase: "done", tool: "host_llm", isError: false });
						ran.set(id, 1);
					}
				}
				await log.close();
				const records = onDisk(path);
				const seen = new Map<string, number>();
				for (const r of records) seen.set(String(r.id), (seen.get(String(r.id)) ?? 0) + 1);
				for (const [id, lines] of ran) expect([id, seen.get(id) ?? 0]).toEqual([id, lines]);
				for (const token of TOKENS) {
					// A coalesced record says how many; a refused request written whole (it has `error`) is one.
					const counted = records
						.filter(r => r.token === token)
						.reduce((s, r) => s + (typeof r.count === "number" ? r.count : r.error !== undefined ? 1 : 0), 0);
					expect([token, counted]).toEqual([token, refused.get(token) ?? 0]);
				}
			}),
			{ numRuns: 40, endOnFailure: true },
		);
	}, 120_000);
});
