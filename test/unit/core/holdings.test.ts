/**
 * The one registry of what each token holds (src/core/holdings.ts, issue 38 items 3 and 8): the share rule
 * whose parts add up to the bound, revocation reaching every kind, and a generated run of random takes,
 * releases, revocations and token counts against a model of its own.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
	NO_SLOTS,
	SLOT_KINDS,
	type SlotBounds,
	shareOf,
	shareRule,
	TokenHoldings,
} from "../../../src/core/holdings.ts";
import type { Slot, SlotKind } from "../../../src/core/types.ts";

describe("shareOf / shareRule", () => {
	test("the reserved parts and the pool add up to the bound exactly, for every bound and token count", () => {
		for (let total = 0; total <= 300; total += 7) {
			for (let live = 1; live <= 70; live++) {
				const { each, pool, cap } = shareOf(total, live);
				expect(each * live + pool).toBe(total);
				expect(pool).toBeLessThan(live);
				expect(cap).toBe(each + (pool > 0 ? 1 : 0));
			}
		}
	});

	test("more tokens than slots (5 tokens, 4 hash jobs): nothing reserved, a pool of 4, one each at most", () => {
		expect(shareOf(4, 5)).toEqual({ each: 0, pool: 4, cap: 1 });
		const what = "file hashes";
		expect(shareRule(what, 4, 5, { mine: 0, used: 3, poolUsed: 3 })).toBeNull();
		expect(shareRule(what, 4, 5, { mine: 1, used: 1, poolUsed: 1 })).toEqual({
			ok: false,
			code: "share",
			why: "this token's 1 file hashes are in progress, its share of 4 among 5 tokens",
			held: 1,
		});
		expect(shareRule(what, 4, 5, { mine: 0, used: 4, poolUsed: 4 })).toEqual({
			ok: false,
			code: "all",
			why: "all 4 file hashes are in progress",
			held: 4,
		});
	});

	test("a refusal names the real count: the token's own slots, the pool in use, or the whole bound", () => {
		// 3 tokens, 10 slots: 3 reserved each, a pool of 1.
		expect(shareRule("uploads", 10, 3, { mine: 3, used: 7, poolUsed: 1 })?.why).toBe(
			"this token's 3 uploads are in progress, its reserved share; the 1 shared by 3 tokens are in use",
		);
		expect(shareRule("uploads", 10, 3, { mine: 3, used: 6, poolUsed: 0 })).toBeNull();
	});
});

const bounds = (over: Partial<SlotBounds>): SlotBounds => ({ ...NO_SLOTS, ...over });

describe("TokenHoldings", () => {
	test("revoking a token ends every slot it holds, of every kind, and no other token's", () => {
		const all = Object.fromEntries(SLOT_KINDS.map(k => [k, 100])) as unknown as SlotBounds;
		const reg = new TokenHoldings({ ...all, tasks: null, prompts: null }, () => 2);
		const ended: string[] = [];
		const slots = new Map<string, Slot>();
		for (const kind of SLOT_KINDS) {
			for (const who of ["a", "b"]) {
				const got = reg.take(kind, { tokenName: who }, reason => ended.push(`${who}:${kind}:${reason}`));
				if (!got.ok) throw new Error(got.why);
				slots.set(`${who}:${kind}`, got.slot);
			}
		}
		expect(reg.endToken("a", "revoked")).toBe(SLOT_KINDS.length);
		expect(ended.sort()).toEqual(SLOT_KINDS.map(k => `a:${k}:revoked`).sort());
		for (const kind of SLOT_KINDS) {
			expect(slots.get(`a:${kind}`)?.ended.aborted).toBe(true);
			expect(slots.get(`b:${kind}`)?.ended.aborted).toBe(false);
		}
		// Ending again ends nothing more.
		expect(reg.endToken("a", "revoked")).toBe(0);
	});

	test("a caller whose secret already ended takes nothing (revoked), whatever the kind and room", () => {
		const reg = new TokenHoldings(bounds({ downloads: 8, prompts: null }), () => 1);
		for (const kind of ["downloads", "prompts"] as const) {
			expect(reg.take(kind, { tokenName: "a", ended: AbortSignal.abort() })).toEqual({
				ok: false,
				code: "revoked",
				why: "this token was revoked or rotated",
				held: 0,
			});
		}
	});

	test("a token at its reserved part with the pool in use takes nothing from another token's reserve", () => {
		// 4 tokens, 6 slots: 1 reserved each, a pool of 2.
		const reg = new TokenHoldings(bounds({ uploads: 6 }), () => 4);
		const take = (t: string) => reg.take("uploads", { tokenName: t });
		for (const t of ["a", "a", "b", "b", "c"]) expect(take(t).ok).toBe(true);
		expect(take("c")).toEqual({
			ok: false,
			code: "share",
			why: "this token's 1 uploads are in progress, its reserved share; the 2 shared by 4 tokens are in use",
			held: 1,
		});
		expect(take("d").ok).toBe(true);
	});

	test("an ended slot counts against the bound until released, not against its token's new share", () => {
		const reg = new TokenHoldings(bounds({ calls: 2 }), () => 1);
		const first = reg.take("calls", { tokenName: "a" });
		const second = reg.take("calls", { tokenName: "a" });
		if (!first.ok || !second.ok) throw new Error("no slot");
		reg.endToken("a", "rotated");
		expect(reg.take("calls", { tokenName: "a" })).toMatchObject({ ok: false, why: "all 2 calls are in progress" });
		first.slot.release();
		first.slot.release();
		expect(reg.take("calls", { tokenName: "a" }).ok).toBe(true);
	});
});

type Op =
	| { op: "take"; token: number; kind: number; releaseOnEnd: boolean }
	| { op: "release"; pick: number }
	| { op: "revoke"; token: number }
	| { op: "live"; n: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record({
			op: fc.constant("take" as const),
			token: fc.nat(9),
			kind: fc.nat(6),
			releaseOnEnd: fc.boolean(),
		}),
	},
	{ weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat(1000) }) },
	{ weight: 1, arbitrary: fc.record({ op: fc.constant("revoke" as const), token: fc.nat(9) }) },
	{ weight: 1, arbitrary: fc.record({ op: fc.constant("live" as const), n: fc.integer({ min: 1, max: 10 }) }) },
);

describe("TokenHoldings, generated (issue 38 item 9)", () => {
	test("random takes, releases, revocations and token counts: no revoked token keeps a live slot, no bound is passed, every token gets its reserved part", () => {
		fc.assert(
			fc.property(
				fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 7, maxLength: 7 }),
				fc.array(opArb, { maxLength: 300 }),
				(totals, ops) => {
					let live = 3;
					const b = Object.fromEntries(
						SLOT_KINDS.map((k, i) => [k, i === 6 ? null : (totals[i] as number)]),
					) as unknown as SlotBounds;
					const reg = new TokenHoldings(b, () => live);
					type Held = { slot: Slot; token: string; endedCalls: number };
					const held: Held[] = [];
					const drop = (h: Held) => {
						h.slot.release();
						held.splice(held.indexOf(h), 1);
					};
					for (const o of ops) {
						if (o.op === "live") live = o.n;
						else if (o.op === "release" && held.length > 0) drop(held[o.pick % held.length] as Held);
						else if (o.op === "revoke") {
							const token = `t${o.token}`;
							reg.endToken(token, "revoked");
							// Nothing of the token is left un-ended, and each of its slots was ended exactly once.
							for (const h of held.filter(x => x.token === token)) {
								expect(h.slot.ended.aborted).toBe(true);
								expect(h.endedCalls).toBe(1);
							}
						} else if (o.op === "take") {
							const kind = SLOT_KINDS[o.kind] as SlotKind;
							const token = `t${o.token % Math.max(1, live)}`;
							// Kind 6 (prompts) is null here: its per-token form has its own test below.
							const total = b[kind] as number | null;
							const mine = held.filter(h => h.slot.kind === kind && h.token === token && !h.slot.ended.aborted).length;
							const used = held.filter(h => h.slot.kind === kind).length;
							const h: Held = { slot: undefined as unknown as Slot, token, endedCalls: 0 };
							const got = reg.take(kind, { tokenName: token }, () => {
								h.endedCalls++;
								if (o.releaseOnEnd) drop(h);
							});
							if (total !== null) {
								// The rule as the contract states it, on the model's own counts: the registry agrees on every take.
								const { each, pool, cap } = shareOf(total, live);
								const active = new Map<string, number>();
								for (const x of held)
									if (x.slot.kind === kind && !x.slot.ended.aborted)
										active.set(x.token, (active.get(x.token) ?? 0) + 1);
								let poolUsed = 0;
								for (const n of active.values()) poolUsed += Math.max(0, n - each);
								const allowed = used < total && mine < cap && (mine < each || poolUsed < pool);
								expect(got.ok).toBe(allowed);
							}
							if (got.ok) {
								h.slot = got.slot;
								held.push(h);
							}
							if (total !== null) expect(held.filter(x => x.slot.kind === kind).length).toBeLessThanOrEqual(total);
						}
					}
				},
			),
			{ numRuns: 300 },
		);
	});
});

describe("TokenHoldings, a kind bounded per token and in all (issue 38.8: approval prompts)", () => {
	test("`each` per token, `total` in all, a revoked token's slots ended and freed on release", () => {
		const reg = new TokenHoldings({ ...NO_SLOTS, prompts: { each: 2, total: 3 } }, () => 5);
		const ended: string[] = [];
		const a1 = reg.take("prompts", { tokenName: "a" }, r => ended.push(`a1 ${r}`));
		const a2 = reg.take("prompts", { tokenName: "a" });
		expect([a1.ok, a2.ok]).toEqual([true, true]);
		expect(reg.take("prompts", { tokenName: "a" })).toMatchObject({ ok: false, code: "share", held: 2 });
		expect(reg.take("prompts", { tokenName: "b" }).ok).toBe(true);
		expect(reg.take("prompts", { tokenName: "c" })).toMatchObject({ ok: false, code: "all", held: 3 });
		expect(reg.endToken("a", "revoked")).toBe(2);
		expect(ended).toEqual(["a1 revoked"]);
		// Ended slots count in all until released, so a burst cannot pass the total meanwhile.
		expect(reg.take("prompts", { tokenName: "c" }).ok).toBe(false);
		if (a1.ok) a1.slot.release();
		expect(reg.take("prompts", { tokenName: "c" }).ok).toBe(true);
		const gone = new AbortController();
		gone.abort();
		expect(reg.take("prompts", { tokenName: "d", ended: gone.signal })).toMatchObject({ ok: false, code: "revoked" });
	});

	test("a server without the host's bound holds no prompts: fail closed", () => {
		const reg = new TokenHoldings(NO_SLOTS, () => 1);
		expect(reg.take("prompts", { tokenName: "a" }).ok).toBe(false);
	});
});
