import { describe, expect, test } from "bun:test";
import { shareOf } from "../../../src/core/holdings.ts";
import { MAX_SESSIONS, SESSION_TTL_MS, type Session, SessionTable } from "../../../src/core/sessions.ts";

const FP = "digest-a";
const HOUR = 60 * 60 * 1000;

/** A session the table had room for (every create here fits). */
function open(table: SessionTable, fp: string, who?: { tokenName: string; client: string | null }): Session {
	const opened = table.create(fp, who);
	if (!opened.ok) throw new Error(opened.why);
	const s = opened.session;
	return s;
}

/** A table on a manual clock, recording every ended sid. */
function makeTable(
	opts: { max?: number; ttlMs?: number; liveTokens?: () => number; isBusy?: (sid: string) => boolean } = {},
) {
	const clock = { t: 1_000_000 };
	const ended: string[] = [];
	const table = new SessionTable({ clock: { now: () => clock.t }, ...opts, onEnd: sid => ended.push(sid) });
	return { table, clock, ended };
}

describe("SessionTable limits", () => {
	test("defaults -> 64 sessions, 24 h idle", () => {
		expect(MAX_SESSIONS).toBe(64);
		expect(SESSION_TTL_MS).toBe(24 * HOUR);
	});

	test("create -> UUIDv4 sid, fields filled from the clock", () => {
		const { table, clock } = makeTable();
		const s = open(table, FP);
		expect(s.sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(s).toMatchObject({ secretDigest: FP, lastSeen: clock.t });
		expect(open(table, FP).sid).not.toBe(s.sid);
	});

	test("64 creates -> all live, nothing ended", () => {
		const { table, clock, ended } = makeTable();
		for (let i = 0; i < 64; i++) {
			open(table, FP);
			clock.t += 1;
		}
		expect(table.size).toBe(64);
		expect(ended).toEqual([]);
	});

	test("65th create -> evicts the oldest untouched session, onEnd called for it", () => {
		const { table, clock, ended } = makeTable();
		const sids: string[] = [];
		for (let i = 0; i < 64; i++) {
			sids.push(open(table, FP).sid);
			clock.t += 1;
		}
		const newest = open(table, FP).sid;
		expect(table.size).toBe(64);
		expect(ended).toEqual([sids[0] as string]);
		expect(table.touch(sids[0] as string, FP).ok).toBe(false);
		expect(table.touch(newest, FP).ok).toBe(true);
	});

	test("65th create after touching the oldest -> evicts the least recently seen instead", () => {
		const { table, clock, ended } = makeTable();
		const sids: string[] = [];
		for (let i = 0; i < 64; i++) {
			sids.push(open(table, FP).sid);
			clock.t += 1;
		}
		const [first, second] = sids as [string, string];
		expect(table.touch(first, FP).ok).toBe(true);
		clock.t += 1;
		open(table, FP);
		expect(ended).toEqual([second]);
		expect(table.peek(first)).toBeDefined();
		expect(table.peek(second)).toBeUndefined();
	});
});

describe("SessionTable TTL", () => {
	test("idle exactly 24 h -> still live", () => {
		const { table, clock } = makeTable();
		const s = open(table, FP);
		clock.t += SESSION_TTL_MS;
		expect(table.touch(s.sid, FP).ok).toBe(true);
	});

	test("idle 24 h + 1 ms -> not found, onEnd called", () => {
		const { table, clock, ended } = makeTable();
		const s = open(table, FP);
		clock.t += SESSION_TTL_MS + 1;
		expect(table.peek(s.sid)).toBeUndefined();
		expect(table.touch(s.sid, FP).ok).toBe(false);
		expect(ended).toEqual([s.sid]);
		expect(table.size).toBe(0);
	});

	test("touch at 23 h refreshes -> live 23 h later (46 h after creation)", () => {
		const { table, clock } = makeTable();
		const s = open(table, FP);
		clock.t += 23 * HOUR;
		const hit = table.touch(s.sid, FP);
		expect(hit.ok && hit.session.lastSeen).toBe(clock.t);
		clock.t += 23 * HOUR;
		expect(table.touch(s.sid, FP).ok).toBe(true);
	});

	test("has() does not refresh -> session expires 24 h after the last touch", () => {
		const { table, clock } = makeTable();
		const s = open(table, FP);
		clock.t += 23 * HOUR;
		expect(table.peek(s.sid)).toBeDefined();
		clock.t += 2 * HOUR;
		expect(table.touch(s.sid, FP).ok).toBe(false);
	});

	test("expired sessions are swept on size and create -> onEnd for each", () => {
		const { table, clock, ended } = makeTable();
		const a = open(table, FP).sid;
		const b = open(table, FP).sid;
		clock.t += SESSION_TTL_MS + 1;
		const c = open(table, FP).sid;
		expect(ended.sort()).toEqual([a, b].sort());
		expect(table.size).toBe(1);
		expect(table.peek(c)).toBeDefined();
	});

	test("ttlMs option -> overrides the default", () => {
		const { table, clock } = makeTable({ ttlMs: 1000 });
		const s = open(table, FP);
		clock.t += 1001;
		expect(table.touch(s.sid, FP).ok).toBe(false);
	});
});

describe("SessionTable lookup", () => {
	test("unknown sid -> not found", () => {
		const { table } = makeTable();
		expect(table.touch("no-such-sid", FP)).toMatchObject({ ok: false });
	});

	test("wrong secret digest -> not found, session left alive and unrefreshed", () => {
		const { table, clock, ended } = makeTable();
		const s = open(table, FP);
		clock.t += 1000;
		expect(table.touch(s.sid, "other-digest")).toMatchObject({ ok: false });
		expect(s.lastSeen).toBe(clock.t - 1000);
		expect(ended).toEqual([]);
		expect(table.touch(s.sid, FP).ok).toBe(true);
	});

	test("delete -> true once, onEnd called, then not found", () => {
		const { table, ended } = makeTable();
		const s = open(table, FP);
		expect(table.delete(s.sid)).toBe(true);
		expect(ended).toEqual([s.sid]);
		expect(table.touch(s.sid, FP).ok).toBe(false);
		expect(table.delete(s.sid)).toBe(false);
		expect(ended).toEqual([s.sid]);
	});
});

describe("SessionTable fairness (contract §16, issue 20 item 4)", () => {
	const A = { tokenName: "a", client: null };
	const B = { tokenName: "b", client: null };
	test("shares: ⌊64 / live tokens⌋ reserved each plus a pool of the rest, adding up to 64 exactly", () => {
		const lives = [1, 2, 3, 64, 65, 200];
		expect(lives.map(n => shareOf(64, n).each)).toEqual([64, 32, 21, 1, 0, 0]);
		expect(lives.map(n => shareOf(64, n).cap)).toEqual([64, 32, 22, 1, 1, 1]);
		for (const n of lives) expect(shareOf(64, n).each * n + shareOf(64, n).pool).toBe(64);
	});

	test("one token's initialize flood evicts only its own idle sessions; the other token's stay", () => {
		const { table, clock, ended } = makeTable({ liveTokens: () => 2 });
		const bs = Array.from({ length: 10 }, () => open(table, "fb", B).sid);
		const as: string[] = [];
		for (let i = 0; i < 500; i++) {
			clock.t += 1;
			as.push(open(table, "fa", A).sid);
		}
		expect(table.byToken().get("a")?.length).toBe(32);
		for (const sid of bs) expect(table.touch(sid, "fb").ok).toBe(true);
		expect(ended.every(sid => as.includes(sid))).toBe(true);
		// b still has room up to its own share.
		for (let i = 0; i < 22; i++) open(table, "fb", B);
		expect(table.size).toBe(64);
	});

	test("over its share with every own session busy -> busy (null); a busy session is never ended", () => {
		const busy = new Set<string>();
		const { table, ended } = makeTable({ max: 4, liveTokens: () => 2, isBusy: sid => busy.has(sid) });
		for (let i = 0; i < 2; i++) busy.add(open(table, "fa", A).sid);
		expect(table.create("fa", A).ok).toBe(false);
		expect(ended).toEqual([]);
		// A full table of busy sessions of another token refuses too: nothing of b's is touched.
		for (let i = 0; i < 2; i++) busy.add(open(table, "fb", B).sid);
		expect(table.create("fc", { tokenName: "c", client: null }).ok).toBe(false);
		expect(ended).toEqual([]);
	});
});
