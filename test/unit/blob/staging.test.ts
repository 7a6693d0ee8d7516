import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	chmodSync,
	closeSync,
	existsSync,
	linkSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { cleanStaging, inFlightName, STAGING_MAX_PER_DIR, stagedSize } from "../../../src/blob/staged.ts";
import { commit, discard, openStaging, park, type StagingFile } from "../../../src/blob/staging.ts";

const NEW_SHAPE = /^\.a2a-staging-[0-9a-f]{32}-[0-9a-f]{16}(\.[0-9]+)?$/;

describe("staging files", () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-staging-"));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));
	const t = () => join(dir, "fw.bin");
	/** A parked staging file of `target`, as a cut PUT leaves it, `ageMs` old. */
	const parked = (target: string, ageMs: number, bytes = "x"): string => {
		const p = inFlightName(target).replace(/\.[0-9]+$/, "");
		writeFileSync(p, bytes, { mode: 0o600 });
		chmodSync(p, 0o600);
		const s = (Date.now() - ageMs) / 1000;
		utimesSync(p, s, s);
		return p;
	};
	const opened = (target: string, offset: number | null): StagingFile => {
		const o = openStaging(target, offset);
		if (!o.ok) throw new Error(o.why);
		return o.value;
	};
	const names = () => readdirSync(dir).sort();

	test("every PUT gets its own name beside the target, unique per process and per upload, 0600", () => {
		const a = opened(t(), null);
		const b = opened(t(), null);
		expect(a.path).not.toBe(b.path);
		for (const f of [a, b]) {
			expect(f.path.startsWith(join(dir, ".a2a-staging-"))).toBe(true);
			expect(basename(f.path)).toMatch(NEW_SHAPE);
			expect(f.path.endsWith(`.${process.pid}`)).toBe(true);
			expect(f.st.mode & 0o777).toBe(0o600);
		}
		// The first start of b did not remove a: a file in flight in this process is never touched.
		expect(existsSync(a.path)).toBe(true);
		for (const f of [a, b]) {
			closeSync(f.fd);
			discard(f);
		}
		expect(names()).toEqual([]);
	});

	test("a planted directory, link or file at any staging name never blocks a PUT nor is written through", () => {
		const victim = join(dir, "victim");
		writeFileSync(victim, "precious");
		// The old fixed name, and a name of the new shape, both planted.
		mkdirSync(join(dir, `.a2a-staging-${"0".repeat(32)}`));
		symlinkSync(victim, `${inFlightName(t()).replace(/\.[0-9]+$/, "")}`);
		const f = opened(t(), null);
		writeSync(f.fd, "new bytes");
		commit(f, t());
		closeSync(f.fd);
		expect(readFileSync(t(), "utf8")).toBe("new bytes");
		expect(readFileSync(victim, "utf8")).toBe("precious");
	});

	test("a cut PUT parks its bytes; a resume claims exactly that size; a second claimant finds nothing", () => {
		const f = opened(t(), null);
		writeSync(f.fd, "12345");
		closeSync(f.fd);
		expect(park(f)).toBe(true);
		expect(existsSync(f.path)).toBe(false);
		expect(stagedSize(t())).toBe(5);
		expect(openStaging(t(), 4)).toMatchObject({ ok: false, code: "offset_mismatch", size: 5 });
		const r = opened(t(), 5);
		expect(r.st.size).toBe(5);
		// Claimed: nothing left for anyone else to resume.
		expect(stagedSize(t())).toBeNull();
		expect(openStaging(t(), 5)).toMatchObject({ ok: false, code: "offset_mismatch", size: 0 });
		writeSync(r.fd, "678");
		commit(r, t());
		closeSync(r.fd);
		expect(readFileSync(t(), "utf8")).toBe("12345678");
		expect(names()).toEqual(["fw.bin"]);
	});

	test("a link or a second name at a parked name is not ours: never claimed, never cleaned", () => {
		const victim = join(dir, "victim");
		writeFileSync(victim, "precious", { mode: 0o600 });
		chmodSync(victim, 0o600);
		const link = inFlightName(t()).replace(/\.[0-9]+$/, "");
		symlinkSync(victim, link);
		const hard = inFlightName(t()).replace(/\.[0-9]+$/, "");
		linkSync(victim, hard);
		expect(stagedSize(t())).toBeNull();
		expect(openStaging(t(), 8)).toMatchObject({ ok: false, code: "offset_mismatch", size: 0 });
		opened(t(), null);
		cleanStaging(dir);
		expect(existsSync(link)).toBe(true);
		expect(existsSync(hard)).toBe(true);
		expect(readFileSync(victim, "utf8")).toBe("precious");
	});

	test("cleaning: older than 24 h and the oldest beyond the bound go; user files of any staging-like name stay", () => {
		const old = parked(join(dir, "a"), 25 * 3600_000);
		const young = Array.from({ length: STAGING_MAX_PER_DIR + 3 }, (_, i) =>
			parked(join(dir, `y${i}`), (20 - i) * 60_000),
		);
		// A user's files: the old fixed shape (even 0600, even ancient), another mode, another shape.
		const user = [
			`.a2a-staging-${"a".repeat(32)}`,
			`.a2a-staging-${"b".repeat(32)}-${"c".repeat(16)}`,
			".a2a-staging-not-hex",
			"plain",
		];
		for (const n of user) {
			writeFileSync(join(dir, n), "user file", { mode: 0o600 });
			const s = (Date.now() - 30 * 3600_000) / 1000;
			utimesSync(join(dir, n), s, s);
		}
		chmodSync(join(dir, user[1] as string), 0o644);
		cleanStaging(dir);
		const left = names();
		expect(left).not.toContain(basename(old));
		for (const n of user) expect(left).toContain(n);
		// The documented bound: 8 per directory (docs/protocol.md, Limits); the newest stay.
		expect(STAGING_MAX_PER_DIR).toBe(8);
		const ours = left.filter(n => !user.includes(n));
		expect(ours).toHaveLength(STAGING_MAX_PER_DIR);
		for (const p of young.slice(-STAGING_MAX_PER_DIR)) expect(left).toContain(basename(p));
	});

	test("a file in flight in another live process is never cleaned nor claimed; a dead process's is", () => {
		const live = inFlightName(t()).replace(/\.[0-9]+$/, `.${process.ppid}`);
		const dead = inFlightName(t()).replace(/\.[0-9]+$/, ".999999999");
		for (const p of [live, dead]) {
			writeFileSync(p, "abc", { mode: 0o600 });
			chmodSync(p, 0o600);
			const s = (Date.now() - 30 * 3600_000) / 1000;
			utimesSync(p, s, s);
		}
		expect(stagedSize(t())).toBe(3);
		cleanStaging(dir);
		expect(existsSync(live)).toBe(true);
		expect(existsSync(dead)).toBe(false);
		expect(openStaging(t(), 3)).toMatchObject({ ok: false, code: "offset_mismatch", size: 0 });
	});

	test("commit refuses a staging name that no longer holds the file this upload wrote", () => {
		const f = opened(t(), null);
		writeSync(f.fd, "mine");
		const other = join(dir, "other");
		writeFileSync(other, "theirs");
		renameSync(other, f.path);
		expect(() => commit(f, t())).toThrow("no longer names the file this upload wrote");
		expect(existsSync(t())).toBe(false);
		closeSync(f.fd);
	});
});
