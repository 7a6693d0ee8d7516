import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentKey } from "../../../src/blob/digest-cache.ts";
import { HashJobs, MAX_HASH_JOBS } from "../../../src/blob/hash-jobs.ts";

const MIB = 1024 * 1024;

describe("HashJobs (issue 30 item 4: one hash per file version, a share per token, stopped when nobody waits)", () => {
	let dir: string;
	let fds: number[];
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-hash-jobs-"));
		fds = [];
	});
	afterEach(() => {
		for (const fd of fds) closeSync(fd);
		rmSync(dir, { recursive: true, force: true });
	});
	/** A sparse file of `size` bytes (zeros: hashing it costs CPU, not disk), opened. */
	const big = (name: string, size: number) => {
		const p = join(dir, name);
		writeFileSync(p, "");
		truncateSync(p, size);
		const fd = openSync(p, "r");
		fds.push(fd);
		return { fd, key: contentKey(fd), size };
	};
	const zeros = (size: number) => createHash("sha256").update(new Uint8Array(size)).digest("hex");
	const stays = () => new AbortController().signal;

	test("concurrent requesters of one file version share one job and all get its digest", async () => {
		const jobs = new HashJobs();
		const f = big("a", 4 * MIB);
		const waits = [
			jobs.wait(f.fd, f.key, f.size, "a", MAX_HASH_JOBS, stays()),
			jobs.wait(f.fd, f.key, f.size, "a", MAX_HASH_JOBS, stays()),
			jobs.wait(f.fd, f.key, f.size, "b", MAX_HASH_JOBS, stays()),
		];
		// Token a is at its share of 1 job, yet joins the running one; so does b.
		expect(jobs.jobsOf("a")).toBe(1);
		expect(jobs.jobsOf("b")).toBe(1);
		for (const w of await Promise.all(waits)) expect(w).toEqual({ ok: true, hex: zeros(4 * MIB) });
		expect(jobs.jobsOf("a")).toBe(0);
	});

	test("a token at its share starts no new job (2 live tokens: 2 jobs each); another token still does; the total is bounded", async () => {
		const jobs = new HashJobs();
		const files = Array.from({ length: MAX_HASH_JOBS + 1 }, (_, i) => big(`f${i}`, 2 * MIB + i));
		const [f0, f1, f2, f3, f4] = files as [
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
		];
		const first = jobs.wait(f0.fd, f0.key, f0.size, "a", 2, stays());
		const second = jobs.wait(f1.fd, f1.key, f1.size, "a", 2, stays());
		expect(await jobs.wait(f2.fd, f2.key, f2.size, "a", 2, stays())).toEqual({
			ok: false,
			why: "this token's 2 file hashes (Want-Repr-Digest) are in progress, its share of 4 among 2 tokens",
		});
		const other = [
			jobs.wait(f2.fd, f2.key, f2.size, "b", 2, stays()),
			jobs.wait(f3.fd, f3.key, f3.size, "b", 2, stays()),
		];
		expect(await jobs.wait(f4.fd, f4.key, f4.size, "c", 2, stays())).toMatchObject({
			ok: false,
			why: `all ${MAX_HASH_JOBS} file hashes (Want-Repr-Digest) are in progress`,
		});
		for (const w of await Promise.all([first, second, ...other])) expect(w.ok).toBe(true);
	});

	test("when the last requester leaves, the hash stops (null) and costs no more CPU; a new request starts afresh", async () => {
		const jobs = new HashJobs();
		const f = big("huge", 1024 * MIB);
		const leave = new AbortController();
		const pending = jobs.wait(f.fd, f.key, f.size, "a", MAX_HASH_JOBS, leave.signal);
		await Bun.sleep(50);
		leave.abort();
		expect(await pending).toEqual({ ok: true, hex: null });
		expect(jobs.jobsOf("a")).toBe(0);
		// The work has stopped: over the next 300 ms this process burns almost no CPU (a GiB would take seconds).
		await Bun.sleep(50);
		const before = process.cpuUsage();
		await Bun.sleep(300);
		const used = process.cpuUsage(before);
		expect((used.user + used.system) / 1000).toBeLessThan(150);
		// One requester leaving while another waits changes nothing for the other.
		const small = big("small", 3 * MIB);
		const goes = new AbortController();
		const a = jobs.wait(small.fd, small.key, small.size, "a", 1, goes.signal);
		const b = jobs.wait(small.fd, small.key, small.size, "b", 1, stays());
		goes.abort();
		expect(await a).toEqual({ ok: true, hex: null });
		expect(await b).toEqual({ ok: true, hex: zeros(3 * MIB) });
	});
});
