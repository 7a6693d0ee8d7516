/**
 * MCP sessions, in memory only. Invariants: at most `max` live entries; an entry idle longer than
 * `ttlMs` is gone; a session answers only to the digest of the secret that created it. Fairness
 * (contract §16): a token holds at most its share (`fairShare`); a new session never evicts or ends
 * another token's session nor a busy one: over its share, or in a full table, a token's own least
 * recently seen idle session makes room, else the answer is busy. Map insertion order is the recency list.
 */
import { randomUUID } from "node:crypto";

export const MAX_SESSIONS = 64;
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** Each of `live` tokens may hold ⌊total / live⌋ (at least 1): the shares never add up past the total. */
export const fairShare = (total: number, live: number): number => Math.max(1, Math.floor(total / Math.max(1, live)));

export interface Session {
	sid: string;
	/** SHA-256 of the secret that opened it: a rotated secret no longer reaches it. */
	secretDigest: string;
	/** The name of the token that opened it (`owner` or a named token). */
	tokenName: string;
	/** The client's `clientInfo.name` from `initialize`, cleaned for display, or null. */
	client: string | null;
	protocolVersion: string;
	createdAt: number;
	lastSeen: number;
}

export interface SessionOptions {
	now?: () => number;
	max?: number;
	ttlMs?: number;
	/** Called for each session that ends (evicted, expired, deleted, revoked) so its calls can be cancelled. */
	onEnd?: (sid: string) => void;
	/** A session with calls in flight does not idle out and is never evicted. */
	isBusy?: (sid: string) => boolean;
	/** How many tokens are live now (each gets an equal share of `max`). */
	liveTokens?: () => number;
}

export type SessionLookup = { ok: true; session: Session } | { ok: false };

export class SessionTable {
	readonly #byId = new Map<string, Session>();
	readonly #now: () => number;
	readonly #max: number;
	readonly #ttlMs: number;
	readonly #onEnd: (sid: string) => void;
	readonly #isBusy: (sid: string) => boolean;
	readonly #liveTokens: () => number;

	constructor(opts: SessionOptions = {}) {
		this.#now = opts.now ?? Date.now;
		this.#max = opts.max ?? MAX_SESSIONS;
		this.#ttlMs = opts.ttlMs ?? SESSION_TTL_MS;
		this.#onEnd = opts.onEnd ?? (() => {});
		this.#isBusy = opts.isBusy ?? (() => false);
		this.#liveTokens = opts.liveTokens ?? (() => 1);
	}

	get size(): number {
		this.#sweep();
		return this.#byId.size;
	}

	/** A new session for `who.tokenName`, or null (server busy) when neither the table nor its share has room. */
	create(
		secretDigest: string,
		protocolVersion: string,
		who: { tokenName: string; client: string | null } = { tokenName: "owner", client: null },
	): Session | null {
		this.#sweep();
		const share = fairShare(this.#max, this.#liveTokens());
		let own = 0;
		let oldestIdle: string | undefined;
		for (const [sid, s] of this.#byId) {
			if (s.tokenName !== who.tokenName) continue;
			own++;
			if (oldestIdle === undefined && !this.#isBusy(sid)) oldestIdle = sid;
		}
		if (own >= share || this.#byId.size >= this.#max) {
			if (oldestIdle === undefined) return null;
			this.#end(oldestIdle);
		}
		const now = this.#now();
		const session = { sid: randomUUID(), secretDigest, ...who, protocolVersion, createdAt: now, lastSeen: now };
		this.#byId.set(session.sid, session);
		return session;
	}

	/** Finds a live session for this token and refreshes its idle timer. */
	touch(sid: string, secretDigest: string): SessionLookup {
		const session = this.#byId.get(sid);
		if (!session) return { ok: false };
		const now = this.#now();
		if (now - session.lastSeen > this.#ttlMs && !this.#isBusy(sid)) {
			this.#end(sid);
			return { ok: false };
		}
		if (session.secretDigest !== secretDigest) return { ok: false };
		session.lastSeen = now;
		this.#byId.delete(sid);
		this.#byId.set(sid, session);
		return { ok: true, session };
	}

	/** The live session without refreshing it, or undefined. */
	peek(sid: string): Session | undefined {
		const session = this.#byId.get(sid);
		return session !== undefined && (this.#now() - session.lastSeen <= this.#ttlMs || this.#isBusy(sid))
			? session
			: undefined;
	}

	/** Live sessions per token name (for `/a2a`). */
	byToken(): Map<string, Session[]> {
		this.#sweep();
		const out = new Map<string, Session[]>();
		for (const s of this.#byId.values()) out.set(s.tokenName, [...(out.get(s.tokenName) ?? []), s]);
		return out;
	}

	/** Ends every session opened with the token `name` (revoked or rotated); the others are untouched. */
	endToken(name: string): number {
		let n = 0;
		for (const [sid, s] of [...this.#byId]) {
			if (s.tokenName === name) {
				this.#end(sid);
				n++;
			}
		}
		return n;
	}

	delete(sid: string): boolean {
		if (!this.#byId.has(sid)) return false;
		this.#end(sid);
		return true;
	}

	#end(sid: string): void {
		this.#byId.delete(sid);
		this.#onEnd(sid);
	}

	#sweep(): void {
		const now = this.#now();
		for (const [sid, s] of [...this.#byId]) if (now - s.lastSeen > this.#ttlMs && !this.#isBusy(sid)) this.#end(sid);
	}
}
