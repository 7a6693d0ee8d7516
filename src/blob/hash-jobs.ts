/**
 * Whole-file hashes for `Want-Repr-Digest` (contract §19: every slot has a share). One job per file
 * version (the content key), shared by every download waiting on it; a job stops as soon as its last
 * waiter leaves, so a client that goes away stops costing CPU. Who may start a job is the one share rule's
 * (core/holdings.ts): each waiter holds a `digests` slot joining its file version, so joining a running job is
 * free and MAX_HASH_JOBS bounds the jobs, the `/blob` route's bound of the kind.
 */
import { closeSync, constants, openSync } from "node:fs";
import { hashWhole } from "./hash.ts";

/** Jobs at once, all tokens together (hashing is about as much CPU as a transfer). */
export const MAX_HASH_JOBS = 4;

interface Job {
	done: Promise<string | null>;
	stop: AbortController;
	/** How many wait on it. */
	waiters: number;
}

export class HashJobs {
	readonly #jobs = new Map<string, Job>();

	/**
	 * The SHA-256 of the file open as `fd` (version `key`, `size` bytes), from the version's one job;
	 * null when `leave` aborted first (the caller is gone).
	 */
	async wait(fd: number, key: string, size: number, leave: AbortSignal): Promise<string | null> {
		const job = this.#jobs.get(key) ?? this.#start(fd, key, size);
		return await this.#join(key, job, leave);
	}

	#start(fd: number, key: string, size: number): Job {
		const stop = new AbortController();
		// The job reads through a descriptor of its own (the same open file), so it outlives the first waiter's.
		let own: number | null = null;
		try {
			own = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
		} catch {
			// No /proc: hash through the caller's descriptor; that caller waits until the job ends either way.
		}
		const job: Job = { stop, waiters: 0, done: Promise.resolve(null) };
		job.done = hashWhole(own ?? fd, size, stop.signal).finally(() => {
			if (own !== null) closeSync(own);
			if (this.#jobs.get(key) === job) this.#jobs.delete(key);
		});
		// Waiters that left see no rejection; one still waiting gets it through the race below.
		job.done.catch(() => {});
		this.#jobs.set(key, job);
		return job;
	}

	async #join(key: string, job: Job, leave: AbortSignal): Promise<string | null> {
		job.waiters++;
		let left: () => void = () => {};
		const gone = new Promise<null>(resolve => {
			left = () => resolve(null);
			if (leave.aborted) left();
			else leave.addEventListener("abort", left, { once: true });
		});
		try {
			return await Promise.race([job.done, gone]);
		} finally {
			leave.removeEventListener("abort", left);
			job.waiters--;
			if (job.waiters === 0) {
				// Nobody waits any more: the hash stops and the next request for this version starts afresh.
				job.stop.abort();
				if (this.#jobs.get(key) === job) this.#jobs.delete(key);
			}
		}
	}
}
