/**
 * SHA-256 of a file and of the part an upload appends, computed on a second thread while Bun pipes the
 * body into the file: the hash (about as much CPU as the transfer itself) overlaps the write instead of
 * following it. The worker only reads the file behind the writer; the main thread never waits on it until
 * the end. Downloads that are asked for `Repr-Digest` use the same worker on a file that does not grow.
 */
import { readSync } from "node:fs";

const HASH_BUFFER_BYTES = 1024 * 1024;
/** A worker costs a thread and a few MiB; below this size hashing afterwards is cheaper. */
export const FOLLOW_MIN_BYTES = 8 * 1024 * 1024;
/** Workers at once: each is a thread with its own heap; uploads past this hash afterwards instead. @internal */
export const MAX_FOLLOWERS = 2;
/** How long the worker sleeps when it has caught up with the writer. */
const POLL_MS = 5;
/** Bound on waiting for a cancelled worker to let go of the file descriptor. */
const CANCEL_WAIT_MS = 2000;

// The shared state word: 0 running, 1 finish at the end offset, 2 cancel (the worker uses the literals).
const FINISH = 1;
const CANCEL = 2;

/** Hex SHA-256 of the whole file [0, end) and of the part [split, end) (the same when split is 0). */
export interface Digests {
	whole: string;
	part: string;
}

export interface FollowHash {
	/** The digests up to `end`, once the worker has read up to it; null if it failed. */
	finish(end: number): Promise<Digests | null>;
	/** Stops the worker and resolves once it no longer touches the file descriptor. */
	cancel(): Promise<void>;
}

/**
 * The worker's body, shipped as source (`toString`) so the package needs no extra entry file. It must
 * not refer to anything outside itself. Shared memory: Int32 state at 0, Float64 end offset at 8.
 */
function followWorker(): void {
	const scope = globalThis as unknown as {
		onmessage: (e: MessageEvent) => void;
		postMessage: (m: unknown) => void;
	};
	scope.onmessage = async (e: MessageEvent) => {
		const { fd, split, shared, bufferBytes, pollMs } = e.data;
		try {
			const fs = await import("node:fs");
			const state = new Int32Array(shared, 0, 1);
			const end = new Float64Array(shared, 8, 1);
			const whole = new Bun.CryptoHasher("sha256");
			const part = split > 0 ? new Bun.CryptoHasher("sha256") : whole;
			const buf = new Uint8Array(bufferBytes);
			let pos = 0;
			for (;;) {
				const st = Atomics.load(state, 0);
				if (st === 2) return scope.postMessage({ cancelled: true });
				const limit = st === 1 ? (end[0] ?? 0) : fs.fstatSync(fd).size;
				while (pos < limit) {
					// Checked per buffer, so a cancel stops a finishing hash too, not only a following one.
					if (Atomics.load(state, 0) === 2) return scope.postMessage({ cancelled: true });
					// A read never straddles `split`, so the part's hasher sees exactly [split, end).
					const stop = pos < split ? Math.min(split, limit) : limit;
					const n = fs.readSync(fd, buf, 0, Math.min(buf.byteLength, stop - pos), pos);
					if (n === 0) break;
					whole.update(buf.subarray(0, n));
					if (part !== whole && pos >= split) part.update(buf.subarray(0, n));
					pos += n;
				}
				if (st === 1) {
					if (pos !== limit) return scope.postMessage({ error: "short read" });
					return scope.postMessage({ whole: whole.digest("hex"), part: part === whole ? null : part.digest("hex") });
				}
				Atomics.wait(state, 0, 0, pollMs);
			}
		} catch (err) {
			scope.postMessage({ error: String(err) });
		}
	};
}

let workerUrl: string | undefined;
// Per process on purpose, not per server: it bounds threads, a cost of the process whichever server starts
// them (the host runs one endpoint per process).
let active = 0;

/** Starts hashing `fd` from 0 as it grows (and from `split` apart); null when no worker can start. */
export function followHash(fd: number, split: number): FollowHash | null {
	if (active >= MAX_FOLLOWERS) return null;
	let worker: Worker;
	try {
		workerUrl ??= URL.createObjectURL(new Blob([`(${followWorker.toString()})()`], { type: "application/javascript" }));
		worker = new Worker(workerUrl);
	} catch {
		return null;
	}
	active++;
	let released = false;
	const shared = new SharedArrayBuffer(16);
	const state = new Int32Array(shared, 0, 1);
	const reply = new Promise<{ whole?: string; part?: string | null; error?: string; cancelled?: boolean }>(resolve => {
		worker.onmessage = (e: MessageEvent) => resolve(e.data);
		worker.onerror = (e: ErrorEvent) => resolve({ error: e.message });
	});
	worker.postMessage({ fd, split, shared, bufferBytes: HASH_BUFFER_BYTES, pollMs: POLL_MS });
	const signal = (to: number) => {
		Atomics.store(state, 0, to);
		Atomics.notify(state, 0);
	};
	const settle = async <T>(p: Promise<T>): Promise<T> => {
		try {
			return await p;
		} finally {
			if (!released) {
				released = true;
				worker.terminate();
				active--;
			}
		}
	};
	return {
		finish: end => {
			new Float64Array(shared, 8, 1)[0] = end;
			signal(FINISH);
			return settle(reply.then(r => (r.whole === undefined ? null : { whole: r.whole, part: r.part ?? r.whole })));
		},
		cancel: () => {
			signal(CANCEL);
			const timeout = new Promise<void>(r => setTimeout(r, CANCEL_WAIT_MS).unref?.());
			return settle(Promise.race([reply.then(() => {}), timeout]));
		},
	};
}

/**
 * The digests of [0, end) and [split, end) read back through one reused buffer, on the main thread. It
 * yields to the event loop between buffers, so other calls (and their heartbeats) go on meanwhile, and
 * stops there once `signal` aborts (then it throws).
 * @internal
 */
export async function hashRanges(fd: number, split: number, end: number, signal?: AbortSignal): Promise<Digests> {
	const whole = new Bun.CryptoHasher("sha256");
	const part = split > 0 ? new Bun.CryptoHasher("sha256") : whole;
	const buf = new Uint8Array(Math.min(HASH_BUFFER_BYTES, Math.max(end, 1)));
	for (let pos = 0; pos < end; ) {
		const stop = pos < split ? Math.min(split, end) : end;
		const n = readSync(fd, buf, 0, Math.min(buf.byteLength, stop - pos), pos);
		if (n === 0) break;
		whole.update(buf.subarray(0, n));
		if (part !== whole && pos >= split) part.update(buf.subarray(0, n));
		pos += n;
		await new Promise(r => setImmediate(r));
		signal?.throwIfAborted();
	}
	const w = whole.digest("hex");
	return { whole: w, part: part === whole ? w : part.digest("hex") };
}

/**
 * The digests of a file that no longer grows, on `worker` (one that followed the writer, or a new one when
 * the file is large and a worker is free), else on the main thread; null once `gone` aborts: the hash
 * stops there, nobody is left to read it (contract §19).
 */
export async function digestsWhile(
	fd: number,
	split: number,
	end: number,
	worker: FollowHash | null,
	gone: AbortSignal,
): Promise<Digests | null> {
	if (gone.aborted) {
		await worker?.cancel();
		return null;
	}
	const hasher = worker ?? (end < FOLLOW_MIN_BYTES ? null : followHash(fd, split));
	if (hasher !== null) {
		const cancel = () => void hasher.cancel();
		gone.addEventListener("abort", cancel, { once: true });
		try {
			const got = await hasher.finish(end);
			if (got !== null || gone.aborted) return gone.aborted ? null : got;
		} finally {
			gone.removeEventListener("abort", cancel);
		}
	}
	try {
		return await hashRanges(fd, split, end, gone);
	} catch (err) {
		if (gone.aborted) return null;
		throw err;
	}
}

/**
 * The whole file's SHA-256 for a download, stopped as soon as `stop` aborts (then null): on a worker when
 * large and one is free, else on the main thread between other work.
 */
export async function hashWhole(fd: number, end: number, stop: AbortSignal): Promise<string | null> {
	if (stop.aborted) return null;
	const worker = end < FOLLOW_MIN_BYTES ? null : followHash(fd, 0);
	if (worker !== null) {
		const cancel = () => void worker.cancel();
		stop.addEventListener("abort", cancel, { once: true });
		try {
			const got = await worker.finish(end);
			if (got !== null || stop.aborted) return got?.whole ?? null;
		} finally {
			stop.removeEventListener("abort", cancel);
		}
	}
	try {
		return (await hashRanges(fd, 0, end, stop)).whole;
	} catch (err) {
		if (stop.aborted) return null;
		throw err;
	}
}
