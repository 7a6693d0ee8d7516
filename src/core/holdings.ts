/**
 * The one registry of what each token holds (contract §19): sessions, calls, tasks, uploads, downloads, digest
 * hashes and approval prompts waiting their turn. A slot of any kind is taken here and nowhere else, with the
 * way to end it, so revoking a token ends every slot it holds, whatever its kind. Every bounded kind follows one
 * share rule (`shareRule`): reserved parts and a pool, never past the bound. Invariants: a token whose identity
 * ended takes nothing; an ended slot still counts against the bound until released.
 */

import type { Holder, Refused, Slot, SlotBound, SlotKind, Taken } from "./types.ts";

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

/**
 * How `total` is split among `live` tokens: `each` reserved per token, `pool` shared, `cap` the most one token
 * takes. Divided (no `fixed`): the reserved parts and the pool (< live) add up to `total` exactly, one from the
 * pool each at most. Fixed by the kind's owner (`fixed` per token, approval prompts): `each` = `cap` = `fixed`.
 * @internal
 */
export function shareOf(total: number, live: number, fixed?: number): { each: number; pool: number; cap: number } {
	const n = Math.max(1, live);
	const each = fixed ?? Math.floor(total / n);
	const pool = Math.max(0, total - each * n);
	return { each, pool, cap: fixed ?? each + (pool > 0 ? 1 : 0) };
}

/** What one token holds of a kind and what all hold: the counts the share rule decides on. */
export interface Usage {
	mine: number;
	used: number;
	poolUsed: number;
}

/**
 * The one share rule of every slot kind: null when a token may take one more now, else the refusal naming
 * the real counts (`all`: the bound is full; `share`: this token's part is). Never past `total`. @internal
 */
export function shareRule(
	what: string,
	bound: number | { each: number; total: number },
	live: number,
	now: Usage,
): (Refused<"all" | "share"> & { held: number }) | null {
	const [total, fixed] = typeof bound === "number" ? [bound, undefined] : [bound.total, bound.each];
	const { each, pool, cap } = shareOf(total, live, fixed);
	const { mine, used, poolUsed } = now;
	const share = (why: string) => ({ ok: false as const, code: "share" as const, why, held: mine });
	if (used >= total) return { ok: false, code: "all", why: `all ${total} ${what} are in progress`, held: used };
	if (mine >= cap) {
		const of = fixed === undefined ? `its share of ${total} among ${live} tokens` : `its bound of ${fixed}`;
		return share(`this token's ${mine} ${what} are in progress, ${of}`);
	}
	if (mine >= each && poolUsed >= pool) {
		return share(
			`this token's ${mine} ${what} are in progress, its reserved share; the ${pool} shared by ${live} tokens are in use`,
		);
	}
	return null;
}

interface Held {
	slot: Slot;
	stop: AbortController;
	onEnd: (reason: string) => void;
	/** Ended by revocation: still counted in `used` until released, no longer in its token's share. */
	ended: boolean;
	/** What it joins (`take`'s `joins`): slots joining one thing count as one unit, per token and in all. */
	joins: string | undefined;
}

export class TokenHoldings {
	readonly #bounds: SlotBounds;
	readonly #liveTokens: () => number;
	readonly #held = new Map<SlotKind, Set<Held>>(SLOT_KINDS.map(k => [k, new Set<Held>()]));

	constructor(bounds: SlotBounds, liveTokens: () => number) {
		this.#bounds = bounds;
		this.#liveTokens = liveTokens;
	}

	/**
	 * A slot of `kind` for `who`, ended by `onEnd` if the token is revoked or rotated; or why there is none.
	 * `joins` names shared work (a file version's hash): joining work some slot already holds is free, and all
	 * slots joining one thing count once against the share and the bound.
	 */
	take(kind: SlotKind, who: Holder, onEnd: (reason: string) => void = () => {}, joins?: string): Taken {
		if (who.ended?.aborted) return { ok: false, code: "revoked", why: "this token was revoked or rotated", held: 0 };
		const bound = this.#bounds[kind];
		const joined = joins !== undefined && [...this.#of(kind)].some(h => h.joins === joins);
		if (bound !== null && !joined) {
			const live = this.#liveTokens();
			const refused = shareRule(NOUNS[kind], bound, live, this.#usage(kind, who.tokenName, bound, live));
			if (refused !== null) return refused;
		}
		const stop = new AbortController();
		const held: Held = {
			stop,
			onEnd,
			ended: false,
			joins,
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

	/** Counts of `kind` for the share rule: this token's live units, all units, and the pool's part in use. */
	#usage(kind: SlotKind, tokenName: string, bound: number | { each: number; total: number }, live: number): Usage {
		const { each } = typeof bound === "number" ? shareOf(bound, live) : bound;
		const units = new Set<unknown>();
		const perToken = new Map<string, Set<unknown>>();
		for (const h of this.#of(kind)) {
			const unit = h.joins ?? h;
			units.add(unit);
			if (h.ended) continue;
			const mine = perToken.get(h.slot.tokenName) ?? new Set<unknown>();
			perToken.set(h.slot.tokenName, mine.add(unit));
		}
		let poolUsed = 0;
		for (const mine of perToken.values()) poolUsed += Math.max(0, mine.size - each);
		return { mine: perToken.get(tokenName)?.size ?? 0, used: units.size, poolUsed };
	}
}
