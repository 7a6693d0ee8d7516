import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	existsSync,
	linkSync,
	mkdtempSync,
	readdirSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import {
	cleanStaging,
	openStaging,
	replaceTarget,
	STAGING_MAX_PER_DIR,
	stagedSize,
	stagingPath,
} from "../../../src/blob/staging.ts";

describe("staging files", () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-staging-"));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));
	const fake = (i: number, ageMs: number) => {
		const p = join(dir, `.a2a-staging-${i.toString(16).padStart(32, "0")}`);
		writeFileSync(p, "x", { mode: 0o600 });
		const t = (Date.now() - ageMs) / 1000;
		utimesSync(p, t, t);
		return p;
	};

	test("the name is beside the target, hidden, never the target's own, one per target", () => {
		const t = join(dir, "fw.bin");
		expect(stagingPath(t)).toStartWith(join(dir, ".a2a-staging-"));
		expect(stagingPath(t)).not.toBe(t);
		expect(stagingPath(stagingPath(t))).not.toBe(stagingPath(t));
		expect(stagingPath(join(dir, "other"))).not.toBe(stagingPath(t));
	});

	test("older than 24 h removed; beyond the per-directory bound the oldest go; kept and foreign names untouched", () => {
		const old = fake(1, 25 * 3600_000);
		const young = Array.from({ length: STAGING_MAX_PER_DIR + 3 }, (_, i) => fake(i + 2, (20 - i) * 60_000));
		const keep = young[0] as string;
		writeFileSync(join(dir, ".a2a-staging-not-hex"), "user file");
		writeFileSync(join(dir, "plain"), "user file");
		cleanStaging(dir, p => p === keep);
		const left = readdirSync(dir);
		expect(left).not.toContain(basename(old));
		expect(left).toContain(basename(keep));
		expect(left).toContain(".a2a-staging-not-hex");
		expect(left).toContain("plain");
		// The documented bound: 8 per directory (docs/protocol.md, Limits).
		expect(STAGING_MAX_PER_DIR).toBe(8);
		expect(left.filter(n => /^\.a2a-staging-[0-9a-f]{32}$/.test(n))).toHaveLength(8);
		// The newest survive.
		for (const p of young.slice(-(STAGING_MAX_PER_DIR - 1))) expect(left).toContain(basename(p));
	});

	test("under the count bound, only the ones older than 24 h go", () => {
		const stale = fake(1, 24 * 3600_000 + 60_000);
		const fresh = fake(2, 23 * 3600_000);
		cleanStaging(dir, () => false);
		expect(readdirSync(dir)).toEqual([basename(fresh)]);
		expect(existsSync(stale)).toBe(false);
	});

	test("a planted link or hard link at the staging name is never written through", () => {
		const t = join(dir, "t.bin");
		const victim = join(dir, "victim");
		writeFileSync(victim, "precious");
		symlinkSync(victim, stagingPath(t));
		expect(stagedSize(t)).toBeNull();
		const resumed = openStaging(stagingPath(t), 8);
		expect(resumed).toMatchObject({ ok: false, code: "offset_mismatch" });
		rmSync(stagingPath(t));
		linkSync(victim, stagingPath(t));
		expect(stagedSize(t)).toBeNull();
		expect(openStaging(stagingPath(t), 8)).toMatchObject({ ok: false, code: "offset_mismatch", size: 0 });
		const fresh = openStaging(stagingPath(t), null);
		expect(fresh.ok).toBe(true);
		expect(Bun.file(victim).size).toBe(8);
	});

	test("replaceTarget follows links (dangling too) and says so", () => {
		const real = join(dir, "real");
		writeFileSync(real, "r");
		symlinkSync(real, join(dir, "l1"));
		symlinkSync(join(dir, "l1"), join(dir, "l2"));
		symlinkSync(join(dir, "nowhere"), join(dir, "dangling"));
		expect(replaceTarget(join(dir, "l2"))).toEqual({ target: real, linked: true });
		expect(replaceTarget(join(dir, "dangling"))).toEqual({ target: join(dir, "nowhere"), linked: true });
		expect(replaceTarget(real)).toEqual({ target: real, linked: false });
	});
});
