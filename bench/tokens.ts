/**
 * Per-request token lookup with many tokens (issue 13): `ping` at 32 sessions against two real hosts,
 * one with the owner token only and one with 50 named tokens besides it (the load uses the last named
 * token, the worst place for a list scan). Rounds interleave the two hosts; the table shows medians.
 * The lookup is one SHA-256 and one Map get, so the two should be within noise of each other.
 * Env: TOKENS_BENCH_SECONDS (per run, default 2), TOKENS_BENCH_ROUNDS (default 5). Prints, never asserts.
 */
import { timingSafeEqual } from "node:crypto";
import { TokenSet } from "../src/config/auth.ts";
import { Host } from "../test/helpers/host.ts";
import type { LoadResult } from "../test/helpers/loadgen.ts";
import { load as runLoad } from "./load.ts";
import { median } from "./table.ts";

const SECONDS = Number(process.env.TOKENS_BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.TOKENS_BENCH_ROUNDS ?? 5);
const SESSIONS = 32;
const NAMED = 50;

const named = Array.from({ length: NAMED }, (_, i) => ({
	name: `t${i + 1}`,
	token: `named-${i + 1}-`.padEnd(43, String.fromCharCode(97 + (i % 26))),
}));

/** The single-token check the lookup replaced: both digests, compared in constant time. */
const expected = Bun.SHA256.hash("o".repeat(43)) as Uint8Array;
const compareBefore = (presented: string): boolean =>
	timingSafeEqual(Bun.SHA256.hash(presented) as Uint8Array, expected);

/** The lookup alone, in process: ns per call for 1 and 51 tokens, and the old single-token compare. */
function lookupNs(): void {
	const N = 500_000;
	const owner = "o".repeat(43);
	const time = (f: () => unknown): number => {
		for (let i = 0; i < 20_000; i++) f();
		const t0 = Bun.nanoseconds();
		for (let i = 0; i < N; i++) f();
		return (Bun.nanoseconds() - t0) / N;
	};
	const one = new TokenSet([{ name: "owner", token: owner }]);
	const fifty = new TokenSet([{ name: "owner", token: owner }, ...named]);
	const last = named[NAMED - 1]?.token ?? "";
	const rows: Array<[string, number[]]> = [
		["single-token compare before (digest + timingSafeEqual)", []],
		["TokenSet.identify, 1 token", []],
		["TokenSet.identify, 51 tokens, the last named one", []],
		["TokenSet.identify, 51 tokens, a wrong token", []],
	];
	for (let r = 0; r < ROUNDS; r++) {
		rows[0]?.[1].push(time(() => compareBefore(owner)));
		rows[1]?.[1].push(time(() => one.identify(owner)));
		rows[2]?.[1].push(time(() => fifty.identify(last)));
		rows[3]?.[1].push(time(() => fifty.identify(`${last}x`)));
	}
	console.log(`token lookup in process, ns per call (median of ${ROUNDS} × ${N})`);
	for (const [label, xs] of rows) console.log(`  ${label.padEnd(56)} ${median(xs).toFixed(0)}`);
}

lookupNs();

const hosts: Record<"one" | "fifty", Host | undefined> = { one: undefined, fifty: undefined };
try {
	hosts.one = await Host.start({});
	hosts.fifty = await Host.start({ config: { tokens: named } });
	const runs = { one: [] as LoadResult[], fifty: [] as LoadResult[] };
	const token = { one: hosts.one.token, fifty: named[NAMED - 1]?.token ?? "" };
	const load = (who: "one" | "fifty", total: number) =>
		runLoad({
			kind: "rpc",
			url: (hosts[who] as Host).url,
			token: token[who],
			sessions: SESSIONS,
			perSession: Math.ceil(total / SESSIONS),
			messages: [{ method: "ping" }],
		});
	let total = 2000;
	for (const who of ["one", "fifty"] as const) {
		const r = await load(who, total);
		if (r.errors > 0) throw new Error(`warm-up ${who}: ${r.errors} errors, ${r.firstError}`);
		total = Math.max(total, Math.ceil(SECONDS * r.rps));
	}
	for (let round = 1; round <= ROUNDS; round++) {
		const order = round % 2 === 1 ? (["one", "fifty"] as const) : (["fifty", "one"] as const);
		for (const who of order) {
			const r = await load(who, total);
			if (r.errors > 0) throw new Error(`${who}: ${r.errors} errors, ${r.firstError}`);
			runs[who].push(r);
			console.log(
				`  round ${round} ${who === "one" ? "1 token  " : "51 tokens"} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50ms.toFixed(3)}  p99 ${r.p99ms.toFixed(3)} ms`,
			);
		}
	}
	const row = (label: string, rs: LoadResult[]) =>
		`| ${label} | ${median(rs.map(r => r.rps)).toFixed(0)} | ${median(rs.map(r => r.p50ms)).toFixed(3)} | ${median(rs.map(r => r.p99ms)).toFixed(3)} |`;
	console.log(`\nping, ${SESSIONS} sessions, medians of ${ROUNDS} interleaved rounds (${total} requests each)`);
	console.log("| configuration | req/s | p50 ms | p99 ms |\n|---|---|---|---|");
	console.log(row("owner token only", runs.one));
	console.log(row(`owner + ${NAMED} named tokens (the last one used)`, runs.fifty));
	const ratio = median(runs.fifty.map(r => r.rps)) / median(runs.one.map(r => r.rps));
	console.log(`\n${NAMED + 1} tokens / 1 token, req/s: ${ratio.toFixed(3)}`);
} finally {
	for (const h of Object.values(hosts)) {
		await h?.stop();
		h?.cleanup();
	}
}
