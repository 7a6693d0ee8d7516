/**
 * One audit budget per token (contract §19): a bucket of bytes that refills at AUDIT_RATE_BYTES_PER_S up to
 * AUDIT_BURST_BYTES. Every record a token causes is paid from it; only records of work that ran may take it
 * below zero, so one token's hour of records stays under what the log keeps (figures in docs/security.md).
 * The buckets live in a store: this process's memory, or a file every bridge on one audit path shares
 * (budget-file.ts), so two bridges never give one token two budgets. A bucket back at full is forgotten.
 */

/** What a token may write at once after being quiet. */
export const AUDIT_BURST_BYTES = 6 * 1024 * 1024;
/**
 * What a token may write per second, sustained: with the burst, an hour is about 71 % of what the log keeps
 * after a record (3 × (16 MiB − 8 KiB)), leaving the rest of that hour to every other token.
 */
export const AUDIT_RATE_BYTES_PER_S = 8 * 1024;
/** More buckets than live tokens can fill in a refill time: the oldest (nearest full) goes first. */
export const MAX_BUCKETS = 4096;
/** When the shared store could not be read in time: what a refused token is told to wait. */
const STORE_BUSY_WAIT_MS = 1000;

export interface Bucket {
	level: number;
	at: number;
}

/** Where the buckets are: `run` hands them to `fn` and keeps what it changed; undefined when out of reach now. */
export interface BucketStore {
	run<T>(fn: (buckets: Map<string, Bucket>) => T): T | undefined;
}

/** This process's buckets only (tests, and the fallback when the shared file cannot be used). */
export const memoryStore = (): BucketStore => {
	const buckets = new Map<string, Bucket>();
	return { run: fn => fn(buckets) };
};

export class TokenBudget {
	readonly #store: BucketStore;
	readonly #now: () => number;
	readonly #burst: number;
	readonly #rate: number;
	/** Charges of work that ran made while the store was out of reach: paid at its next reach (bounded). */
	readonly #owed = new Map<string, number>();

	constructor(
		now: () => number,
		burst = AUDIT_BURST_BYTES,
		ratePerS = AUDIT_RATE_BYTES_PER_S,
		store: BucketStore = memoryStore(),
	) {
		this.#now = now;
		this.#burst = burst;
		this.#rate = ratePerS;
		this.#store = store;
	}

	/** Takes `bytes` when the token has them; false (nothing taken) when it has not. */
	take(token: string, bytes: number): boolean {
		return (
			this.#run(m => {
				if ((this.#refill(m, token)?.level ?? this.#burst) < bytes) return false;
				this.#debit(m, token, bytes);
				return true;
			}) ?? false
		);
	}

	/** Takes `bytes` whether or not the token has them: a record of work that ran is never dropped. */
	charge(token: string, bytes: number): void {
		const done = this.#run(m => {
			this.#debit(m, token, bytes);
			return true;
		});
		if (done) return;
		if (this.#owed.size >= MAX_BUCKETS && !this.#owed.has(token)) return;
		this.#owed.set(token, (this.#owed.get(token) ?? 0) + bytes);
	}

	/** Gives back what a reservation did not use (dropped when the store is out of reach: never more than owed). */
	refund(token: string, bytes: number): void {
		this.#run(m => {
			const b = this.#refill(m, token);
			if (b === undefined) return;
			b.level = Math.min(this.#burst, b.level + bytes);
			if (b.level >= this.#burst) m.delete(token);
		});
	}

	/** Milliseconds until the token has `bytes` (0 when it has them now). */
	waitMs(token: string, bytes: number): number {
		const level = this.#run(m => this.#refill(m, token)?.level ?? this.#burst);
		if (level === undefined) return STORE_BUSY_WAIT_MS;
		const short = bytes - level;
		return short <= 0 ? 0 : Math.ceil((short * 1000) / this.#rate);
	}

	/** Runs `fn` on the store, first paying what was owed while it was out of reach. */
	#run<T>(fn: (m: Map<string, Bucket>) => T): T | undefined {
		return this.#store.run(m => {
			for (const [token, bytes] of this.#owed) this.#debit(m, token, bytes);
			this.#owed.clear();
			return fn(m);
		});
	}

	#debit(m: Map<string, Bucket>, token: string, bytes: number): void {
		const b = this.#refill(m, token) ?? this.#open(m, token);
		b.level -= bytes;
	}

	#open(m: Map<string, Bucket>, token: string): Bucket {
		if (m.size >= MAX_BUCKETS) {
			const oldest = m.keys().next().value;
			if (oldest !== undefined) m.delete(oldest);
		}
		const b = { level: this.#burst, at: this.#now() };
		m.set(token, b);
		return b;
	}

	#refill(m: Map<string, Bucket>, token: string): Bucket | undefined {
		const b = m.get(token);
		if (b === undefined) return undefined;
		const t = this.#now();
		b.level = Math.min(this.#burst, b.level + (Math.max(0, t - b.at) * this.#rate) / 1000);
		b.at = t;
		if (b.level < this.#burst) return b;
		m.delete(token);
		return undefined;
	}
}
