/**
 * SHA-256 of the bytes an upload appends, computed on a second thread while Bun pipes the body into
 * the file: the hash (about as much CPU as the transfer itself) overlaps the write instead of following
 * it. The worker only reads the file behind the writer; the main thread never waits on it until the end.
 */
import { readSync } from "node:fs";

const HASH_BUFFER_BYTES = 1024 * 1024;
/** A worker costs a thread and a few MiB; below this size hashing afterwards is cheaper. */
export const FOLLOW_MIN_BYTES = 8 * 1024 * 1024;
/** Workers at once: each is a thread with its own heap; uploads past this hash afterwards instead. */
export const MAX_FOLLOWERS = 2;
/** How long the worker sleeps when it has caught up with the writer. */
const POLL_MS = 5;
/** Bound on waiting for a cancelled worker to let go of the file descriptor. */
const CANCEL_WAIT_MS = 2000;

// The shared state word: 0 running, 1 finish at the end offset, 2 cancel (the worker uses the literals).
const FINISH = 1;
const CANCEL = 2;

export interface FollowHash {
	/** The digest of [start, end), once the worker has read up to `end`; null if it failed. */
	finish(end: number): Promise<string | null>;
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
		const { fd, start, shared, bufferBytes, pollMs } = e.data;
		try {
			const fs = await import("node:fs");
			const state = new Int32Array(shared, 0, 1);
			const end = new Float64Array(shared, 8, 1);
			const hash = new Bun.CryptoHasher("sha256");
			const buf = new Uint8Array(bufferBytes);
			let pos = start;
			for (;;) {
				const st = Atomics.load(state, 0);
				if (st === 2) return scope.postMessage({ cancelled: true });
				const limit = st === 1 ? (end[0] ?? 0) : fs.fstatSync(fd).size;
				while (pos < limit) {
					const n = fs.readSync(fd, buf, 0, Math.min(buf.byteLength, limit - pos), pos);
					if (n === 0) break;
					hash.update(buf.subarray(0, n));
					pos += n;
				}
				if (st === 1) {
					return scope.postMessage(pos === limit ? { digest: hash.digest("hex") } : { error: "short read" });
				}
				Atomics.wait(state, 0, 0, pollMs);
			}
		} catch (err) {
			scope.postMessage({ error: String(err) });
		}
	};
}

let workerUrl: string | undefined;
let active = 0;

/** Starts hashing `fd` from `start` as it grows; null when no worker can be started (hash afterwards). */
export function followHash(fd: number, start: number): FollowHash | null {
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
	const reply = new Promise<{ digest?: string; error?: string; cancelled?: boolean }>(resolve => {
		worker.onmessage = (e: MessageEvent) => resolve(e.data);
		worker.onerror = (e: ErrorEvent) => resolve({ error: e.message });
	});
	worker.postMessage({ fd, start, shared, bufferBytes: HASH_BUFFER_BYTES, pollMs: POLL_MS });
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
			return settle(reply.then(r => r.digest ?? null));
		},
		cancel: () => {
			signal(CANCEL);
			const timeout = new Promise<void>(r => setTimeout(r, CANCEL_WAIT_MS).unref?.());
			return settle(Promise.race([reply.then(() => {}), timeout]));
		},
	};
}

/**
 * SHA-256 of [start, start + length) read back through one reused buffer, on the main thread. It
 * yields to the event loop between buffers, so other calls (and their heartbeats) go on meanwhile.
 */
export async function hashRange(fd: number, start: number, length: number): Promise<string> {
	const hash = new Bun.CryptoHasher("sha256");
	const buf = new Uint8Array(Math.min(HASH_BUFFER_BYTES, Math.max(length, 1)));
	for (let pos = start, end = start + length; pos < end; ) {
		const n = readSync(fd, buf, 0, Math.min(buf.byteLength, end - pos), pos);
		if (n === 0) break;
		hash.update(buf.subarray(0, n));
		pos += n;
		await new Promise(r => setImmediate(r));
	}
	return hash.digest("hex");
}
