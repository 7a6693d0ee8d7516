import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentKey } from "../../../src/blob/digest-cache.ts";
import { HashJobs, MAX_HASH_JOBS } from "../../../src/blob/hash-jobs.ts";
import { NO_SLOTS, TokenHoldings } from "../../../src/core/holdings.ts";

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
	type File = ReturnType<typeof big>;
	/** Jobs with the share a server gives them: the `/blob` route's bound of `digests` among `live` tokens. */
	const hashing = (live: number) => {
		const jobs = new HashJobs();
		const reg = new TokenHoldings({ ...NO_SLOTS, digests: MAX_HASH_JOBS }, () => live);
		/** A wait as a download makes it (blob/download.ts): a `digests` slot joining the version, then its job. */
		const wait = async (
			f: File,
			token: string,
			leave: AbortSignal,
		): Promise<{ ok: boolean; why?: string; hex?: string | null }> => {
			const taken = reg.take("digests", { tokenName: token }, undefined, f.key);
			if (!taken.ok) return { ok: false, why: taken.why };
			try {
				return { ok: true, hex: await jobs.wait(f.fd, f.key, f.size, leave) };
			} finally {
				taken.slot.release();
			}
		};
		return { wait };
	};

	test("concurrent requesters of one file version share one job and all get its digest", async () => {
		const { wait } = hashing(MAX_HASH_JOBS);
		const f = big("a", 4 * MIB);
		const other = big("other", MIB);
		const waits = [wait(f, "a", stays()), wait(f, "a", stays()), wait(f, "b", stays())];
		// Token a is at its share of 1 job, yet joins the running one; so does b. The job counts once for a.
		expect(await wait(other, "a", stays())).toMatchObject({ ok: false });
		for (const w of await Promise.all(waits)) expect(w).toEqual({ ok: true, hex: zeros(4 * MIB) });
		expect(await wait(other, "a", stays())).toEqual({ ok: true, hex: zeros(MIB) });
	});

	test("a token at its share starts no new job (2 live tokens: 2 jobs each); another token still does; the total is bounded", async () => {
		const { wait } = hashing(2);
		const files = Array.from({ length: MAX_HASH_JOBS + 1 }, (_, i) => big(`f${i}`, 2 * MIB + i));
		const [f0, f1, f2, f3, f4] = files as [
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
			(typeof files)[0],
		];
		const first = wait(f0, "a", stays());
		const second = wait(f1, "a", stays());
		expect(await wait(f2, "a", stays())).toEqual({
			ok: false,
			why: "this token's 2 file hashes (Want-Repr-Digest) are in progress, its share of 4 among 2 tokens",
		});
		const other = [wait(f2, "b", stays()), wait(f3, "b", stays())];
		expect(await wait(f4, "c", stays())).toMatchObject({
			ok: false,
			why: `all ${MAX_HASH_JOBS} file hashes (Want-Repr-Digest) are in progress`,
		});
		for (const w of await Promise.all([first, second, ...other])) expect(w.ok).toBe(true);
	});

	test("when the last requester leaves, the hash stops (null) and costs no more CPU; a new request starts afresh", async () => {
		const { wait } = hashing(MAX_HASH_JOBS);
		const f = big("huge", 1024 * MIB);
		const leave = new AbortController();
		const pending = wait(f, "a", leave.signal);
		await Bun.sleep(50);
		leave.abort();
		expect(await pending).toEqual({ ok: true, hex: null });
		// The work has stopped: over the next 300 ms this process burns almost no CPU (a GiB would take seconds).
		await Bun.sleep(50);
		const before = process.cpuUsage();
		await Bun.sleep(300);
		const used = process.cpuUsage(before);
		expect((used.user + used.system) / 1000).toBeLessThan(150);
		// One requester leaving while another waits changes nothing for the other.
		const small = big("small", 3 * MIB);
		const goes = new AbortController();
		const a = wait(small, "a", goes.signal);
		const b = wait(small, "b", stays());
		goes.abort();
		expect(await a).toEqual({ ok: true, hex: null });
		expect(await b).toEqual({ ok: true, hex: zeros(3 * MIB) });
	});
});
