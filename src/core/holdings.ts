/**
 * The one registry of what each token holds (contract §19): sessions, calls, tasks, uploads, downloads, digest
 * waits and approval prompts waiting their turn (bounded per token and in all). A slot of any kind is taken here and nowhere else, with the way to end it, so
 * revoking a token ends every slot it holds, whatever its kind. Kinds with a shared bound follow one share
 * rule (`shareRule`): the reserved parts and the pool add up to the bound exactly, never past it. Invariants:
 * a token whose identity ended takes nothing; an ended slot still counts against the bound until released.
 */

import type { Holder, Slot, SlotBound, SlotKind, Taken } from "./types.ts";

/** Every kind of slot (`SlotKind`, types.ts), each with its noun; the compiler holds the two lists equal. */
const NOUNS: Readonly<Record<SlotKind, string>> = {
	sessions: "sessions",
	calls: "calls",
	tasks: "tasks",
	uploads: "uploads",
	downloads: "downloads",
	digests: "file hashes (Want-Repr-Digest)",
	prompts: "approval prompts",
};
export const SLOT_KINDS = Object.keys(NOUNS) as readonly SlotKind[];

/** Every kind's bound (`SlotBound`, types.ts): shared by the live tokens, per token and in all, or its owner's. */
export type SlotBounds = Readonly<Record<SlotKind, SlotBound>>;

/** Every kind bounded at 0: a part made without the server's registry (unit tests) opens its own kind only. */
export const NO_SLOTS: SlotBounds = {
	sessions: 0,
	calls: 0,
	tasks: 0,
	uploads: 0,
	downloads: 0,
	digests: 0,
	prompts: 0,
};

/** How `total` is split among `live` tokens: `each` reserved per token, `pool` (< live) shared, one each at most. */
export function shareOf(total: number, live: number): { each: number; pool: number; cap: number } {
	const n = Math.max(1, live);
	const each = Math.floor(total / n);
	const pool = total - each * n;
	return { each, pool, cap: each + (pool > 0 ? 1 : 0) };
}

/** What a token may take now: null, or the sentence saying why not (the counts it names are the real ones). */
export function shareRule(
	what: string,
	total: number,
	live: number,
	now: { mine: number; used: number; poolUsed: number },
): string | null {
	const { each, pool, cap } = shareOf(total, live);
	const { mine, used, poolUsed } = now;
	if (used >= total) return `all ${total} ${what} are in progress`;
	if (mine >= cap) return `this token's ${mine} ${what} are in progress, its share of ${total} among ${live} tokens`;
	if (mine >= each && poolUsed >= pool) {
		return `this token's ${mine} ${what} are in progress, its reserved share; the ${pool} shared by ${live} tokens are in use`;
	}
	return null;
}

interface Held {
	slot: Slot;
	stop: AbortController;
	onEnd: (reason: string) => void;
	/** Ended by revocation: still counted in `used` until released, no longer in its token's share. */
	ended: boolean;
}

export class TokenHoldings {
	readonly #bounds: SlotBounds;
	readonly #liveTokens: () => number;
	readonly #held = new Map<SlotKind, Set<Held>>(SLOT_KINDS.map(k => [k, new Set<Held>()]));

	constructor(bounds: SlotBounds, liveTokens: () => number) {
		this.#bounds = bounds;
		this.#liveTokens = liveTokens;
	}

	/** A slot of `kind` for `who`, ended by `onEnd` if the token is revoked; or why there is none. */
	take(kind: SlotKind, who: Holder, onEnd: (reason: string) => void = () => {}): Taken {
		if (who.ended?.aborted) return { ok: false, why: "this token was revoked or rotated", revoked: true };
		const bound = this.#bounds[kind];
		if (typeof bound === "number") {
			const why = shareRule(NOUNS[kind], bound, this.#liveTokens(), this.#usage(kind, who.tokenName, bound));
			if (why !== null) return { ok: false, why };
		} else if (bound !== null) {
			const { mine, used } = this.#usage(kind, who.tokenName, bound.total);
			if (used >= bound.total) {
				return { ok: false, why: `all ${bound.total} ${NOUNS[kind]} are held`, limit: { scope: "all", held: used } };
			}
			if (mine >= bound.each) {
				const why = `this token's ${mine} ${NOUNS[kind]} are held, its bound of ${bound.each}`;
				return { ok: false, why, limit: { scope: "token", held: mine } };
			}
		}
		const stop = new AbortController();
		const held: Held = {
			stop,
			onEnd,
			ended: false,
			slot: {
				kind,
				tokenName: who.tokenName,
				ended: stop.signal,
				release: () => {
					this.#of(kind).delete(held);
				},
			},
		};
		this.#of(kind).add(held);
		return { ok: true, slot: held.slot };
	}

	/** Ends every slot `tokenName` holds, of every kind: each slot's signal aborts and its own end runs. */
	endToken(tokenName: string, reason: string): number {
		let n = 0;
		for (const held of SLOT_KINDS.flatMap(k => [...this.#of(k)])) {
			if (held.slot.tokenName !== tokenName || held.ended) continue;
			held.ended = true;
			n++;
			held.stop.abort(reason);
			held.onEnd(reason);
		}
		return n;
	}

	#of(kind: SlotKind): Set<Held> {
		return this.#held.get(kind) as Set<Held>;
	}

	/** Counts of `kind` for the share rule: this token's live slots, all slots, and the pool's part in use. */
	#usage(kind: SlotKind, tokenName: string, total: number): { mine: number; used: number; poolUsed: number } {
		const { each } = shareOf(total, this.#liveTokens());
		const perToken = new Map<string, number>();
		let used = 0;
		for (const h of this.#of(kind)) {
			used++;
			if (!h.ended) perToken.set(h.slot.tokenName, (perToken.get(h.slot.tokenName) ?? 0) + 1);
		}
		let poolUsed = 0;
		for (const n of perToken.values()) poolUsed += Math.max(0, n - each);
		return { mine: perToken.get(tokenName) ?? 0, used, poolUsed };
	}
}
