/**
 * One audit budget per token (contract §19): a bucket of bytes that refills at AUDIT_RATE_BYTES_PER_S up to
 * AUDIT_BURST_BYTES. Every record a token causes is paid from it; only records of work that ran may take it
 * below zero, so one token's hour of records stays under what the log keeps (figures in docs/security.md).
 * Pure apart from the injected clock; a bucket back at full is forgotten, so the map holds busy tokens only.
 */

/** What a token may write at once after being quiet. @internal */
export const AUDIT_BURST_BYTES = 6 * 1024 * 1024;
/**
 * What a token may write per second, sustained: with the burst, an hour is about 71 % of what the log keeps
 * after a record (3 × (16 MiB − 8 KiB)), leaving the rest of that hour to every other token. @internal
 */
export const AUDIT_RATE_BYTES_PER_S = 8 * 1024;
/** More buckets than live tokens can fill in a refill time: the oldest (nearest full) goes first. */
const MAX_BUCKETS = 4096;

interface Bucket {
	level: number;
	at: number;
}

export class TokenBudget {
	readonly #buckets = new Map<string, Bucket>();
	readonly #now: () => number;
	readonly #burst: number;
	readonly #rate: number;

	constructor(now: () => number, burst = AUDIT_BURST_BYTES, ratePerS = AUDIT_RATE_BYTES_PER_S) {
		this.#now = now;
		this.#burst = burst;
		this.#rate = ratePerS;
	}

	/** Bytes the token may spend now (negative while it pays off records of work that ran). */
	level(token: string): number {
		return this.#refill(token)?.level ?? this.#burst;
	}

	/** Takes `bytes` when the token has them; false (nothing taken) when it has not. */
	take(token: string, bytes: number): boolean {
		if (this.level(token) < bytes) return false;
		this.charge(token, bytes);
		return true;
	}

	/** Takes `bytes` whether or not the token has them: a record of work that ran is never dropped. */
	charge(token: string, bytes: number): void {
		const b = this.#refill(token) ?? this.#open(token);
		b.level -= bytes;
	}

	/** Gives back what a reservation did not use. */
	refund(token: string, bytes: number): void {
		const b = this.#refill(token);
		if (b === undefined) return;
		b.level = Math.min(this.#burst, b.level + bytes);
		if (b.level >= this.#burst) this.#buckets.delete(token);
	}

	/** Milliseconds until the token has `bytes` (0 when it has them now). */
	waitMs(token: string, bytes: number): number {
		const short = bytes - this.level(token);
		return short <= 0 ? 0 : Math.ceil((short * 1000) / this.#rate);
	}

	#open(token: string): Bucket {
		if (this.#buckets.size >= MAX_BUCKETS) {
			const oldest = this.#buckets.keys().next().value;
			if (oldest !== undefined) this.#buckets.delete(oldest);
		}
		const b = { level: this.#burst, at: this.#now() };
		this.#buckets.set(token, b);
		return b;
	}

	#refill(token: string): Bucket | undefined {
		const b = this.#buckets.get(token);
		if (b === undefined) return undefined;
		const t = this.#now();
		b.level = Math.min(this.#burst, b.level + (Math.max(0, t - b.at) * this.#rate) / 1000);
		b.at = t;
		if (b.level < this.#burst) return b;
		this.#buckets.delete(token);
		return undefined;
	}
}
