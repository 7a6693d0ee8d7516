/**
 * The config lock between processes (contract §19, issue 38 finding 9): a left-over lock is taken over by
 * one waiter and never handed to two writers; a lock is never seen empty; a live holder is never judged
 * left over by age. The race is run with real processes, each entering and leaving its locked section in an
 * append-only log (the second channel): any two entries without a leave between them are two holders.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { occupant, removeLeftOver, takeOver, withLock } from "../../../src/config/lock.ts";

/** A pid no process has (above any pid_max): its holder is gone. */
const GONE_PID = "999999999";
const LOCK_MODULE = join(import.meta.dir, "..", "..", "..", "src", "config", "lock.ts");

/**
 * A worker: in each of `rounds` slots of `slotMs` from `startAt`, worker 0 first plants a left-over lock (a
 * gone pid) when none is there; then every worker takes the lock and logs `+pid` on entry, `-pid` on leave.
 */
function workerSource(module: string): string {
	return `import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { withLock } from ${JSON.stringify(module)};
const [target, log, startAt, rounds, slotMs, index] = process.argv.slice(2);
for (let r = 0; r < Number(rounds); r++) {
	const slot = Number(startAt) + r * Number(slotMs);
	if (index === "0") {
		while (Date.now() < slot - 40) Bun.sleepSync(1);
		if (!existsSync(target + ".lock")) writeFileSync(target + ".lock", ${JSON.stringify(GONE_PID)});
	}
	while (Date.now() < slot) {}
	withLock(target, () => {
		appendFileSync(log, "+" + process.pid + "\\n");
		Bun.sleepSync(3);
		appendFileSync(log, "-" + process.pid + "\\n");
	});
}
`;
}

/** The first place two holders overlap in the log, or null; and how many sections ran. */
function overlaps(log: string): { at: string | null; sections: number } {
	const lines = log.split("\n").filter(l => l !== "");
	let inside: string | null = null;
	let sections = 0;
	for (const [i, l] of lines.entries()) {
		if (l.startsWith("+")) {
			if (inside !== null) return { at: `line ${i + 1}: ${l} entered while ${inside} held it`, sections };
			inside = l.slice(1);
			sections++;
		} else if (l.slice(1) === inside) inside = null;
		else return { at: `line ${i + 1}: ${l} left a section it did not enter`, sections };
	}
	return { at: null, sections };
}

/** Runs `workers` processes for `rounds` slots against one target; returns the log. */
async function race(dir: string, module: string, workers: number, rounds: number): Promise<string> {
	const script = join(dir, "worker.ts");
	writeFileSync(script, workerSource(module));
	const target = join(dir, "a2a-bridge.json");
	const log = join(dir, "sections.log");
	writeFileSync(log, "");
	const slotMs = 150;
	const startAt = Date.now() + 2500;
	const procs = Array.from({ length: workers }, (_, i) =>
		Bun.spawn([process.execPath, script, target, log, String(startAt), String(rounds), String(slotMs), String(i)], {
			stdout: "ignore",
			stderr: "pipe",
		}),
	);
	const codes = await Promise.all(procs.map(p => p.exited));
	const errors = await Promise.all(procs.map(p => new Response(p.stderr).text()));
	expect({ codes, errors: errors.filter(e => e !== "") }).toEqual({ codes: codes.map(() => 0), errors: [] });
	return readFileSync(log, "utf8");
}

describe("the lock takeover hands one lock to one writer (issue 38 finding 9)", () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-lock-race-"));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	test("6 processes race over a left-over lock, 30 rounds: never two inside; nothing left behind", async () => {
		const log = await race(dir, LOCK_MODULE, 6, 30);
		expect(overlaps(log)).toEqual({ at: null, sections: 6 * 30 });
		expect(readdirSync(dir).sort()).toEqual(["sections.log", "worker.ts"]);
	}, 60_000);

	test("a live holder's lock is never taken, by age neither: the wait ends in a sentence, the lock stays", () => {
		const target = join(dir, "a2a-bridge.json");
		writeFileSync(`${target}.lock`, String(process.pid));
		// As old as it can be while its holder runs: made right after the holder started.
		const old = new Date(Date.now() - performance.now() + 100);
		utimesSync(`${target}.lock`, old, old);
		expect(() => withLock(target, () => 1)).toThrow(`another process holds ${target}.lock for more than 5 s`);
		expect(readFileSync(`${target}.lock`, "utf8")).toBe(String(process.pid));
	}, 15_000);

	test("a lock whose pid now names a process that started after it (a reused pid) is left over", () => {
		const target = join(dir, "a2a-bridge.json");
		writeFileSync(`${target}.lock`, String(process.pid));
		const before = new Date(Date.now() - 24 * 3_600_000 - performance.now());
		utimesSync(`${target}.lock`, before, before);
		expect(withLock(target, () => readFileSync(`${target}.lock`, "utf8"))).toBe(String(process.pid));
		expect(existsSync(`${target}.lock`)).toBe(false);
	});

	test("a takeover gate left by a taker that died is removed, and the left-over lock then taken", () => {
		const target = join(dir, "a2a-bridge.json");
		writeFileSync(`${target}.lock`, GONE_PID);
		writeFileSync(`${target}.lock.takeover`, GONE_PID);
		expect(withLock(target, () => 7)).toBe(7);
		expect(readdirSync(dir)).toEqual([]);
	});
});

describe("each step of a takeover, in the interleaving that handed one lock to two writers", () => {
	let dir: string;
	let lock: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-lock-step-"));
		lock = join(dir, "a2a-bridge.json.lock");
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	test("a waiter that judged a lock left over, late: the fresh lock put there since is not removed", () => {
		writeFileSync(lock, GONE_PID);
		const judged = occupant(lock);
		expect(judged).toEqual({ kind: "stale", id: expect.stringMatching(/^\d+:\d+$/) });
		// Another waiter took it over meanwhile and now holds a fresh lock.
		rmSync(lock);
		writeFileSync(lock, String(process.pid));
		removeLeftOver(lock, judged.kind === "stale" ? judged.id : "");
		expect(readFileSync(lock, "utf8")).toBe(String(process.pid));
		expect(readdirSync(dir)).toEqual(["a2a-bridge.json.lock"]);
	});

	test("while another taker holds the gate, a takeover leaves the lock alone and says to wait", () => {
		writeFileSync(lock, GONE_PID);
		writeFileSync(`${lock}.takeover`, String(process.pid));
		expect(takeOver(lock)).toBe(false);
		expect(readFileSync(lock, "utf8")).toBe(GONE_PID);
		rmSync(`${lock}.takeover`);
		expect(takeOver(lock)).toBe(true);
		expect(readdirSync(dir)).toEqual([]);
	});
});
