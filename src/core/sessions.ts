/**
 * MCP sessions, in memory only. Invariants: at most `max` live entries; an entry idle longer than
 * `ttlMs` is gone; a session answers only to the digest of the secret that created it. Each session is a
 * slot of the registry of what tokens hold (core/holdings.ts: its share rule, and revocation ends it).
 * Fairness (contract §16): a new session never evicts or ends another token's session nor a busy one: over
 * its share, or in a full table, a token's own least recently seen idle session makes room, else the answer
 * is busy. Map insertion order is the recency list.
 */
import { randomUUID } from "node:crypto";
import { SYSTEM_CLOCK } from "./clock.ts";
import { NO_SLOTS, TokenHoldings } from "./holdings.ts";
import type { Clock, Refused, Slot, Taken } from "./types.ts";

export const MAX_SESSIONS = 64;
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

export interface Session {
	sid: string;
	/** SHA-256 of the secret that opened it: a rotated secret no longer reaches it. */
	secretDigest: string;
	/** The name of the token that opened it (`owner` or a named token). */
	tokenName: string;
	/** The client's `clientInfo.name` from `initialize`, cleaned for display, or null. */
	client: string | null;
	lastSeen: number;
}

export interface SessionOptions {
	clock?: Pick<Clock, "now">;
	max?: number;
	ttlMs?: number;
	/** Called for each session that ends (evicted, expired, deleted, revoked) so its calls can be cancelled. */
	onEnd?: (sid: string) => void;
	/** A session with calls in flight does not idle out and is never evicted. */
	isBusy?: (sid: string) => boolean;
	/** The registry the sessions are slots of (bounded there at `max`); a table made alone has its own. */
	holdings?: TokenHoldings;
	/** How many tokens are live now, for a table with its own registry. */
	liveTokens?: () => number;
}

export type SessionLookup = { ok: true; session: Session } | Refused;
/** A new session, or why there is none: the registry's refusal (answered as server busy). */
export type NewSession = { ok: true; session: Session } | Exclude<Taken, { ok: true }>;

export class SessionTable {
	readonly #byId = new Map<string, Session>();
	readonly #slots = new Map<string, Slot>();
	readonly #holdings: TokenHoldings;
	readonly #now: () => number;
	readonly #ttlMs: number;
	readonly #onEnd: (sid: string) => void;
	readonly #isBusy: (sid: string) => boolean;

	constructor(opts: SessionOptions = {}) {
		this.#now = () => (opts.clock ?? SYSTEM_CLOCK).now();
		this.#ttlMs = opts.ttlMs ?? SESSION_TTL_MS;
		this.#onEnd = opts.onEnd ?? (() => {});
		this.#isBusy = opts.isBusy ?? (() => false);
		const bounds = { ...NO_SLOTS, sessions: opts.max ?? MAX_SESSIONS };
		this.#holdings = opts.holdings ?? new TokenHoldings(bounds, opts.liveTokens ?? (() => 1));
	}

	get size(): number {
		this.#sweep();
		return this.#byId.size;
	}

	/** A new session for `who.tokenName`, or the refusal when neither the table nor its share has room. */
	create(
		secretDigest: string,
		who: { tokenName: string; client: string | null } = { tokenName: "owner", client: null },
	): NewSession {
		this.#sweep();
		const sid = randomUUID();
		const take = () => this.#holdings.take("sessions", who, () => this.#end(sid));
		let taken = take();
		if (!taken.ok) {
			const oldestIdle = this.#oldestIdle(who.tokenName);
			if (oldestIdle === undefined) return taken;
			this.#end(oldestIdle);
			taken = take();
			if (!taken.ok) return taken;
		}
		this.#slots.set(sid, taken.slot);
		const now = this.#now();
		const session = { sid, secretDigest, ...who, lastSeen: now };
		this.#byId.set(sid, session);
		return { ok: true, session };
	}

	/** The token's least recently seen session with no call in flight. */
	#oldestIdle(tokenName: string): string | undefined {
		for (const [sid, s] of this.#byId) if (s.tokenName === tokenName && !this.#isBusy(sid)) return sid;
		return undefined;
	}

	/** Finds a live session for this token and refreshes its idle timer. */
	touch(sid: string, secretDigest: string): SessionLookup {
		const session = this.#byId.get(sid);
		if (!session) return { ok: false, why: "no such session" };
		const now = this.#now();
		if (now - session.lastSeen > this.#ttlMs && !this.#isBusy(sid)) {
			this.#end(sid);
			return { ok: false, why: "the session expired" };
		}
		if (session.secretDigest !== secretDigest) return { ok: false, why: "another secret's session" };
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

	delete(sid: string): boolean {
		if (!this.#byId.has(sid)) return false;
		this.#end(sid);
		return true;
	}

	#end(sid: string): void {
		if (!this.#byId.delete(sid)) return;
		this.#slots.get(sid)?.release();
		this.#slots.delete(sid);
		this.#onEnd(sid);
	}

	#sweep(): void {
		const now = this.#now();
		for (const [sid, s] of [...this.#byId]) if (now - s.lastSeen > this.#ttlMs && !this.#isBusy(sid)) this.#end(sid);
	}
}
