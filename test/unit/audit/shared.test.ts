/**
 * Issue 38 item 4, "two bridges on one audit path lose nothing": two logs on one path (each with its own
 * descriptor and flock, as two processes have), random interleavings and sizes, every line counted on disk
 * across generations.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { createAuditLog } from "../../../src/audit/log.ts";
import { RECORD_MAX_BYTES, recordLine } from "../../../src/audit/record.ts";
import { AUDIT_GENERATIONS, auditGenerations, rotateShared } from "../../../src/audit/rotate.ts";
import { CrossLocks } from "../../../src/blob/flock.ts";
import { waitFor } from "../../helpers/wait.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-shared-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

const ids = (path: string): string[] =>
	auditGenerations(path)
		.filter(p => existsSync(p))
		.flatMap(p => readFileSync(p, "utf8").split("\n"))
		.filter(l => l !== "")
		.map(l => String((JSON.parse(l) as { id: string }).id));

const MAX_BYTES = 32 * 1024;

describe("two writers on one audit path (issue 38 item 4)", () => {
	test("random interleavings -> every line either wrote is on disk once while less than three generations came after it", async () => {
		let run = 0;
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.record({ who: fc.integer({ min: 0, max: 1 }), pad: fc.integer({ min: 0, max: 8 }) }), {
					minLength: 200,
					maxLength: 600,
					size: "max",
				}),
				async ops => {
					const path = join(dir, `audit-${run++}.log`);
					const locks = [new CrossLocks(), new CrossLocks()];
					const logs = locks.map(l =>
						createAuditLog({ path, log: () => {}, maxBytes: MAX_BYTES, lock: fd => l.tryTake(fd, () => {}) }),
					);
					const written: { id: string; at: number }[] = [];
					let bytes = 0;
					for (const [i, op] of ops.entries()) {
						const args = { pad: Array.from({ length: op.pad }, (_, k) => `${k}`.padEnd(100, "y")) };
						const record = {
							id: `w${op.who}-${i}`,
							sid: null,
							phase: "done" as const,
							tool: "host_llm",
							isError: false,
							args,
						};
						logs[op.who]?.write(record);
						bytes += Buffer.byteLength(recordLine(record, new Date()));
						written.push({ id: record.id, at: bytes });
					}
					await Promise.all(logs.map(l => l.close()));
					const found = ids(path);
					expect(found.length).toBe(new Set(found).size);
					// Every line with less than three generations' worth written after it is kept (older ones may go).
					const keptBytes = AUDIT_GENERATIONS * (MAX_BYTES - RECORD_MAX_BYTES);
					const recent = written.filter(w => bytes - w.at < keptBytes).map(w => w.id);
					expect(recent.filter(id => !found.includes(id))).toEqual([]);
				},
			),
			{ numRuns: 30, endOnFailure: true },
		);
	}, 120_000);

	test("a writer that judged a file full after another rotated it -> no second rotation (re-checked under the lock)", () => {
		const path = join(dir, "audit.log");
		writeFileSync(path, "x".repeat(100));
		const stale = openSync(path, "r");
		const locks = new CrossLocks();
		const lock = (fd: number) => locks.tryTake(fd, () => {});
		const said: string[] = [];
		rotateShared(path, stale, 10, 50, lock, w => said.push(w));
		expect(existsSync(`${path}.1`)).toBe(true);
		writeFileSync(path, "y".repeat(100));
		// The same descriptor, now `.1`: the live file is another one, so this writer must not rotate it away.
		rotateShared(path, stale, 10, 50, lock, w => said.push(w));
		expect(existsSync(`${path}.2`)).toBe(false);
		expect(readFileSync(path, "utf8")).toBe("y".repeat(100));
		expect(said).toEqual([]);
		closeSync(stale);
	});

	test("another process holds the rotation lock -> records go on in the live file after one bounded wait; once free, a later write rotates", async () => {
		const path = join(dir, "audit.log");
		const holder = new CrossLocks();
		const lockFd = openSync(`${path}.lock`, "a");
		const held = holder.tryTake(lockFd, () => {});
		expect(held.kind).toBe("held");
		const mine = new CrossLocks();
		const log = createAuditLog({ path, log: () => {}, maxBytes: 1024, lock: fd => mine.tryTake(fd, () => {}) });
		const rec = (id: string) => ({
			id,
			sid: null,
			phase: "done" as const,
			tool: "t",
			isError: false,
			args: "z".repeat(100),
		});
		const t0 = performance.now();
		for (let i = 0; i < 12; i++) log.write(rec(`a${i}`));
		// One 50 ms wait for the lock, then no more for a second: a held lock does not slow every record.
		expect(performance.now() - t0).toBeLessThan(300);
		expect(existsSync(`${path}.1`)).toBe(false);
		expect(ids(path)).toEqual(Array.from({ length: 12 }, (_, i) => `a${i}`));
		if (held.kind === "held") held.release();
		let n = 0;
		await waitFor(
			"a rotation once the lock is free",
			() => {
				log.write(rec(`b${n++}`));
				return existsSync(`${path}.1`);
			},
			{ timeoutMs: 5000, everyMs: 100 },
		);
		await log.close();
		expect(ids(path).length).toBe(12 + n);
		closeSync(lockFd);
	});
});
