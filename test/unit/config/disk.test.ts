/**
 * Whole or nothing on disk (contract §19, issue 30 defects 2 and 5): config writes on a nearly full tmpfs,
 * a lock that cannot be written, lock paths held by something no bridge makes. Every claim is read back
 * from the disk: the file's bytes, the directory's names, how long the next write waited.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic0600 } from "../../../src/config/disk.ts";
import { addToken, loadConfig, readConfig, revokeToken, rotateToken } from "../../../src/config/file.ts";
import { withLock } from "../../../src/config/lock.ts";
import { mountTmpfs, type SmallDisk } from "../../helpers/tmpfs.ts";

const secret = (i: number) => `s${String(i).padStart(3, "0")}-${"k".repeat(40)}`;
/** A config of 80 named tokens: about 6 KiB, more than the one page a nearly full disk has left after the lock. */
const bigConfig = (): string =>
	`${JSON.stringify(
		{
			port: 4000,
			token: `owner-${"o".repeat(40)}`,
			host: "127.0.0.1",
			tokens: Array.from({ length: 80 }, (_, i) => ({ name: `t${i}`, token: secret(i) })),
		},
		null,
		"\t",
	)}\n`;
const names = (path: string) => readConfig(path).config.tokens.map(t => t.name);

describe("on a nearly full disk (a 64 KiB tmpfs)", () => {
	let disk: SmallDisk;
	let path: string;
	beforeEach(() => {
		disk = mountTmpfs(64);
		path = join(disk.dir, "a2a-bridge.json");
		writeFileSync(path, bigConfig(), { mode: 0o600 });
	});
	afterEach(() => disk.unmount());

	test("add with two pages free (one for the lock, one for 4 KiB of the new file) -> throws ENOSPC naming the file; the config byte-identical; no temp or lock file", () => {
		const before = readFileSync(path);
		disk.fill();
		disk.free(2);
		expect(() => addToken(path, null, "laptop")).toThrow(`${path} not written (ENOSPC); the file is unchanged`);
		expect(readFileSync(path).equals(before)).toBe(true);
		expect(readdirSync(disk.dir).sort()).toEqual([".filler", "a2a-bridge.json"]);
	});

	test("rotate and revoke too: the old bytes stay, every token of the file still there", () => {
		const before = readFileSync(path);
		disk.fill();
		disk.free(2);
		expect(() => rotateToken(path, null, "t3")).toThrow("(ENOSPC); the file is unchanged");
		expect(() => revokeToken(path, null, "t3")).toThrow("(ENOSPC); the file is unchanged");
		expect(readFileSync(path).equals(before)).toBe(true);
		expect(names(path)).toHaveLength(80);
	});

	test("the lock itself cannot be written (no page free) -> no lock left; once space is back the next write goes through at once", () => {
		disk.fill();
		expect(() => addToken(path, null, "laptop")).toThrow(`${path}.lock not written (ENOSPC); nothing was written`);
		expect(existsSync(`${path}.lock`)).toBe(false);
		disk.free();
		const t0 = performance.now();
		expect(addToken(path, null, "laptop")).toMatch(/^[A-Za-z0-9_-]{43}$/);
		// A lock left behind would make this wait 5 s and fail (its age rule allows 30 s).
		expect(performance.now() - t0).toBeLessThan(1000);
		expect(names(path)).toContain("laptop");
	});
});

describe("lock paths held by something no bridge makes (defect 2)", () => {
	let dir: string;
	let path: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-lock-"));
		path = join(dir, "a2a-bridge.json");
		writeFileSync(path, bigConfig(), { mode: 0o600 });
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	const occupants: Array<[string, (lock: string) => void, string]> = [
		[
			"a directory with a file in it",
			l => {
				mkdirSync(l);
				writeFileSync(join(l, "x"), "planted");
			},
			"a directory",
		],
		["a symlink", l => symlinkSync("/etc/passwd", l), "a symlink"],
		["a file that holds no pid", l => writeFileSync(l, "planted bytes"), "a file that holds no pid"],
	];
	for (const [what, plant, said] of occupants) {
		test(`${what} -> revoke and rotate still write the file, at once, and say the lock was not used`, () => {
			plant(`${path}.lock`);
			const warnings: string[] = [];
			const t0 = performance.now();
			revokeToken(path, null, "t1", { warnings });
			const next = rotateToken(path, null, "t2", { warnings });
			expect(performance.now() - t0).toBeLessThan(1000);
			expect(names(path)).not.toContain("t1");
			expect(readConfig(path).config.tokens.find(t => t.name === "t2")?.token).toBe(next);
			expect(warnings[0]).toBe(
				`${path}.lock is ${said} the bridge did not make (remove it); ${path} was changed without the lock`,
			);
			// The occupant is left as it was: the bridge neither follows nor removes it.
			if (what.startsWith("a directory")) expect(readFileSync(join(`${path}.lock`, "x"), "utf8")).toBe("planted");
			expect(readFileSync("/etc/passwd", "utf8").length).toBeGreaterThan(0);
		});
	}

	test("without the lock, a replace whose file changed since the cycle began is refused and the cycle runs again", () => {
		mkdirSync(`${path}.lock`);
		let runs = 0;
		withLock(path, () => {
			runs++;
			// Another writer's change lands between this cycle's read and its rename (first run only).
			if (runs === 1) writeFileSync(path, "another writer's bytes");
			writeFileAtomic0600(path, `run ${runs}`);
		});
		expect(runs).toBe(2);
		expect(readFileSync(path, "utf8")).toBe("run 2");
	});

	test("an empty lock (an older version's, between create and pid) is a holder's for 30 s, then taken over at once", () => {
		writeFileSync(`${path}.lock`, "");
		const recent = new Date(Date.now() - 5000);
		utimesSync(`${path}.lock`, recent, recent);
		expect(() => revokeToken(path, null, "t1")).toThrow(`another process holds ${path}.lock`);
		const old = new Date(Date.now() - 60_000);
		utimesSync(`${path}.lock`, old, old);
		const t0 = performance.now();
		revokeToken(path, null, "t1");
		expect(performance.now() - t0).toBeLessThan(1000);
		expect(existsSync(`${path}.lock`)).toBe(false);
	}, 15_000);
});

describe("npm run token decides under its lock (defect 10)", () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-decide-"));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	test("the file is the table (base null): a name revoked since an earlier read is not rotated back in", () => {
		const path = join(dir, "a2a-bridge.json");
		const earlier = loadConfig(path).config;
		addToken(path, null, "ci");
		const seen = loadConfig(path).config;
		revokeToken(path, null, "ci");
		const before = readFileSync(path);
		expect(() => rotateToken(path, null, "ci")).toThrow("no token named 'ci'");
		expect(readFileSync(path).equals(before)).toBe(true);
		// A live host's table (base = its config) still knows a live name the file lost: it is written back.
		expect(rotateToken(path, seen, "ci")).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(names(path)).toEqual(["ci"]);
		expect(earlier.tokens).toEqual([]);
	});
});
