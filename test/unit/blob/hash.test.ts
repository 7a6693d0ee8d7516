import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestsWhile, followHash, hashRanges, MAX_FOLLOWERS } from "../../../src/blob/hash.ts";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const chunk = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function open(): { fd: number; path: string } {
	dir = mkdtempSync(join(tmpdir(), "a2a-blob-hash-"));
	const path = join(dir, "f.bin");
	return { fd: openSync(path, "a+"), path };
}

describe("followHash", () => {
	test("hashes [0, end) and [split, end) of a file that grows while it reads, across the worker's polls", async () => {
		const { fd, path } = open();
		writeSync(fd, chunk(1000, 1));
		const follower = followHash(fd, 1000);
		expect(follower).not.toBeNull();
		for (let i = 0; i < 12; i++) {
			writeSync(fd, chunk(300_000 + i, i));
			await Bun.sleep(i % 3 === 0 ? 12 : 0);
		}
		const all = readFileSync(path);
		expect(await follower?.finish(all.byteLength)).toEqual({ whole: sha(all), part: sha(all.subarray(1000)) });
		closeSync(fd);
	});

	test("an end past what the file holds is a failed hash (null), never a digest of fewer bytes", async () => {
		const { fd } = open();
		writeSync(fd, chunk(4096, 2));
		const follower = followHash(fd, 0);
		expect(await follower?.finish(8192)).toBeNull();
		closeSync(fd);
	});

	test("cancel resolves (the worker stops reading) and the descriptor can be closed", async () => {
		const { fd } = open();
		writeSync(fd, chunk(2 * 1024 * 1024, 3));
		const follower = followHash(fd, 0);
		expect(follower).not.toBeNull();
		await follower?.cancel();
		closeSync(fd);
	});

	test("the same digests as hashRanges (the small-body path) for the same split, with a split inside a buffer", async () => {
		const { fd, path } = open();
		writeSync(fd, chunk(3 * 1024 * 1024 + 5, 4));
		const all = readFileSync(path);
		for (const split of [0, 17, 1024 * 1024 + 3]) {
			const follower = followHash(fd, split);
			const viaWorker = await follower?.finish(all.byteLength);
			expect(viaWorker).toEqual(await hashRanges(fd, split, all.byteLength));
			expect(viaWorker).toEqual({ whole: sha(all), part: sha(all.subarray(split)) });
		}
		const here = new AbortController().signal;
		expect(await digestsWhile(fd, 5, all.byteLength, null, here)).toEqual({
			whole: sha(all),
			part: sha(all.subarray(5)),
		});
		closeSync(fd);
	});

	test("issue 38: an upload's digest stops once its client is gone: null, on a worker and on the main thread", async () => {
		const { fd } = open();
		// A sparse 8 GiB file: hashing it whole takes seconds on any machine; a stopped hash ends far sooner.
		const end = 8 * 1024 * 1024 * 1024;
		ftruncateSync(fd, end);
		const stops = async (worker: ReturnType<typeof followHash>) => {
			const gone = new AbortController();
			const started = performance.now();
			const hashing = digestsWhile(fd, 0, end, worker, gone.signal);
			await Bun.sleep(20);
			gone.abort();
			expect(await hashing).toBeNull();
			expect(performance.now() - started).toBeLessThan(1500);
		};
		await stops(followHash(fd, 0));
		// Every worker busy: the hash runs on the main thread, and stops there too.
		const busy = Array.from({ length: MAX_FOLLOWERS }, () => followHash(fd, 0));
		await stops(null);
		for (const w of busy) await w?.cancel();
		// A client already gone starts no hash at all.
		expect(await digestsWhile(fd, 0, end, null, AbortSignal.abort())).toBeNull();
		closeSync(fd);
	});

	test(`at most ${MAX_FOLLOWERS} workers at once: the next upload gets null (hash afterwards) until one ends`, async () => {
		const { fd } = open();
		writeSync(fd, chunk(1024, 5));
		const running = Array.from({ length: MAX_FOLLOWERS }, () => followHash(fd, 0));
		expect(running.every(f => f !== null)).toBe(true);
		expect(followHash(fd, 0)).toBeNull();
		await running[0]?.finish(1024);
		await running[0]?.cancel(); // a second settle must not free a second slot
		const next = followHash(fd, 0);
		expect(next).not.toBeNull();
		expect(followHash(fd, 0)).toBeNull();
		for (const f of [next, ...running.slice(1)]) await f?.cancel();
		closeSync(fd);
	});
});
