/**
 * Whole-file hashes for `Want-Repr-Digest` (contract §19: every slot has a share). One job per file
 * version (the content key), shared by every download waiting on it; a job stops as soon as its last
 * waiter leaves, so a client that goes away stops costing CPU. Starting a job follows the share rule of every
 * slot (core/holdings.ts `shareRule`) over the MAX_HASH_JOBS jobs, counting the jobs each token waits on;
 * joining a job already running costs nothing and is always allowed.
 */
import { closeSync, constants, openSync } from "node:fs";
import { shareOf, shareRule } from "../core/holdings.ts";
import { hashWhole } from "./hash.ts";

/** Jobs at once, all tokens together (hashing is about as much CPU as a transfer). @internal */
export const MAX_HASH_JOBS = 4;

interface Job {
	done: Promise<string | null>;
	stop: AbortController;
	/** Waiters per token name. */
	waiters: Map<string, number>;
}

export type HashWait = { ok: true; hex: string | null } | { ok: false; why: string };

export class HashJobs {
	readonly #jobs = new Map<string, Job>();

	/** How many jobs `token` waits on now. */
	jobsOf(token: string): number {
		let n = 0;
		for (const job of this.#jobs.values()) if (job.waiters.has(token)) n++;
		return n;
	}

	/**
	 * The SHA-256 of the file open as `fd` (version `key`, `size` bytes), for `token`, one of `live` tokens.
	 * `hex` is null when `leave` aborted first (the caller is gone); `ok: false` says which bound is full.
	 */
	async wait(
		fd: number,
		key: string,
		size: number,
		token: string,
		live: number,
		leave: AbortSignal,
	): Promise<HashWait> {
		let job = this.#jobs.get(key);
		if (job === undefined) {
			const why = shareRule("file hashes (Want-Repr-Digest)", MAX_HASH_JOBS, live, this.#usage(token, live));
			if (why !== null) return { ok: false, why };
			job = this.#start(fd, key, size);
		}
		return { ok: true, hex: await this.#join(key, job, token, leave) };
	}

	/** The share rule's counts: the jobs `token` waits on, all jobs, and the pool's part in use. */
	#usage(token: string, live: number): { mine: number; used: number; poolUsed: number } {
		const { each } = shareOf(MAX_HASH_JOBS, live);
		const perToken = new Map<string, number>();
		for (const job of this.#jobs.values())
			for (const t of job.waiters.keys()) perToken.set(t, (perToken.get(t) ?? 0) + 1);
		let poolUsed = 0;
		for (const n of perToken.values()) poolUsed += Math.max(0, n - each);
		return { mine: this.jobsOf(token), used: this.#jobs.size, poolUsed };
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
		const job: Job = { stop, waiters: new Map(), done: Promise.resolve(null) };
		job.done = hashWhole(own ?? fd, size, stop.signal).finally(() => {
			if (own !== null) closeSync(own);
			if (this.#jobs.get(key) === job) this.#jobs.delete(key);
		});
		// Waiters that left see no rejection; one still waiting gets it through the race below.
		job.done.catch(() => {});
		this.#jobs.set(key, job);
		return job;
	}

	async #join(key: string, job: Job, token: string, leave: AbortSignal): Promise<string | null> {
		job.waiters.set(token, (job.waiters.get(token) ?? 0) + 1);
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
			const n = (job.waiters.get(token) ?? 1) - 1;
			if (n > 0) job.waiters.set(token, n);
			else job.waiters.delete(token);
			if (job.waiters.size === 0) {
				// Nobody waits any more: the hash stops and the next request for this version starts afresh.
				job.stop.abort();
				if (this.#jobs.get(key) === job) this.#jobs.delete(key);
			}
		}
	}
}
