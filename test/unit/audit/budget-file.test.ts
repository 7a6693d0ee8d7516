/**
 * The shared budget file (issue 38 rule 4): bridges arriving and leaving on one audit path give one token one
 * budget, so one token's hour of flooding leaves every earlier record; a hostile `<log>.budget` (garbage,
 * huge levels, a FIFO, a symlink) never lends a token more than a burst and never stops the records.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	existsSync,
	lstatSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, TokenBudget } from "../../../src/audit/budget.ts";
import { budgetFile, parseBuckets } from "../../../src/audit/budget-file.ts";
import { type AuditLog, createAuditLog } from "../../../src/audit/log.ts";
import { auditGenerations } from "../../../src/audit/rotate.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-budget-file-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

const idsOnDisk = (path: string): Set<string> =>
	new Set(
		auditGenerations(path)
			.filter(p => existsSync(p))
			.flatMap(p => readFileSync(p, "utf8").split("\n"))
			.filter(l => l !== "")
			.map(l => String((JSON.parse(l) as { id?: unknown }).id)),
	);

/** A small deterministic generator, so a failing seed can be run again. */
const rng = (seed: number) => () => {
	seed = (seed * 1103515245 + 12345) % 2147483648;
	return seed / 2147483648;
};

describe("one token's budget across 1-4 bridges arriving and leaving on one audit path", () => {
	for (const seed of [1, 2, 3]) {
		test(`seed ${seed}: every earlier record stays after an hour of one token flooding`, async () => {
			const path = join(dir, `audit-${seed}.log`);
			const next = rng(seed);
			let t = Date.UTC(2026, 0, 1);
			const clock = { now: () => t };
			const open = (): AuditLog => createAuditLog({ path, log: () => {}, clock });
			let bridges = [open()];
			const earlier: string[] = [];
			for (let i = 0; i < 10; i++) {
				const c = { id: `owner-${i}`, sid: null, tokenName: "owner", tool: "read", args: { path: `/x-${i}` } };
				expect(bridges[0]?.calls.admit(c)).toBe(0);
				await bridges[0]?.calls.start(c);
				await bridges[0]?.calls.done({ ...c, isError: false });
				earlier.push(c.id);
			}
			const args = { pad: Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(100, "q")) };
			let arrivals = 0;
			for (let step = 0; step < 360; step++) {
				t += 10_000;
				// Every simulated ten seconds a bridge may arrive (up to 4) or leave (at least 1 stays).
				const r = next();
				if (r < 0.2 && bridges.length < 4) {
					bridges.push(open());
					arrivals++;
				} else if (r > 0.8 && bridges.length > 1) {
					const i = Math.floor(next() * bridges.length);
					await bridges[i]?.close();
					bridges = bridges.filter((_, j) => j !== i);
				}
				for (const [b, log] of bridges.entries()) {
					for (let k = 0; k < 10_000; k++) {
						const c = { id: `c${b}-${step}-${k}`, sid: null, tokenName: "ci", tool: "read", args };
						if (log.calls.admit(c) !== 0) break;
						await log.calls.start(c);
						await log.calls.done({ ...c, isError: false });
					}
				}
			}
			for (const log of bridges) await log.close();
			const ids = idsOnDisk(path);
			const lost = earlier.filter(id => !ids.has(id));
			console.log(`seed ${seed}: ${arrivals} arrivals; owner records lost: ${lost.length}`);
			expect(lost).toEqual([]);
		}, 120_000);
	}
});

describe("a hostile budget file", () => {
	test("garbage, huge and non-finite levels parse to at most a burst, never more", () => {
		const m = parseBuckets(
			["ci 1e300 0", "x NaN 5", "y 1 2 3", "%E0%A4%A 5 5", "", "neg -1e300 0", "z  7"].join("\n"),
			AUDIT_BURST_BYTES,
		);
		expect([...m.keys()]).toEqual(["ci", "neg"]);
		expect(m.get("ci")?.level).toBe(AUDIT_BURST_BYTES);
		expect(m.get("neg")?.level).toBe(-AUDIT_BURST_BYTES);
	});

	test("a planted 1e300 level lends nothing beyond one burst (checked on the file on disk)", () => {
		const path = join(dir, "audit.log");
		writeFileSync(`${path}.budget`, `ci 1e300 ${Date.UTC(2026, 0, 1)}\n`, { mode: 0o600 });
		const t = Date.UTC(2026, 0, 1);
		const b = new TokenBudget(
			() => t,
			AUDIT_BURST_BYTES,
			AUDIT_RATE_BYTES_PER_S,
			budgetFile(path, AUDIT_BURST_BYTES, undefined, () => {}),
		);
		let spent = 0;
		while (b.take("ci", 65536)) spent += 65536;
		expect(spent).toBe(AUDIT_BURST_BYTES);
		expect(readFileSync(`${path}.budget`, "utf8")).toBe(`ci 0 ${t}\n`);
		expect(statSync(`${path}.budget`).mode & 0o777).toBe(0o600);
	});

	test("a FIFO or a symlink at the name: said once, the bridge keeps its own budget, records go on", () => {
		for (const kind of ["fifo", "symlink"]) {
			const path = join(dir, `${kind}.log`);
			if (kind === "fifo") Bun.spawnSync(["mkfifo", `${path}.budget`]);
			else symlinkSync(join(dir, "elsewhere"), `${path}.budget`);
			const said: string[] = [];
			const log = createAuditLog({ path, log: l => said.push(l) });
			const c = { id: "one", sid: null, tokenName: "ci", tool: "read", args: {} };
			expect(log.calls.admit(c)).toBe(0);
			void log.calls.start(c);
			expect(said.filter(l => l.includes(".budget")).length).toBe(1);
			expect(idsOnDisk(path).has("one")).toBe(true);
			expect(existsSync(join(dir, "elsewhere"))).toBe(false);
			expect(lstatSync(`${path}.budget`).isFile()).toBe(false);
			void log.close();
		}
	});
});
