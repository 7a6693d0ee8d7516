import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveBlobPath } from "../../../src/blob/parse.ts";
import { reachedPath } from "../../../src/config/paths.ts";
import { ownPathOf } from "../../helpers/own.ts";

describe("the bridge's own paths (contract §19)", () => {
	let dir: string;
	let agent: string;
	let own: string[];
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-own-"));
		agent = join(dir, "home", ".omp", "agent");
		mkdirSync(agent, { recursive: true });
		mkdirSync(join(dir, "home", "work"));
		writeFileSync(join(agent, "a2a-bridge.json"), "{}");
		writeFileSync(join(agent, "a2a-bridge.log"), "");
		own = [join(agent, "a2a-bridge.json"), join(agent, "a2a-bridge.log"), join(agent, "a2a-bridge.runtime.json")];
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));
	const at = (raw: string) =>
		ownPathOf(resolveBlobPath(raw, { home: join(dir, "home"), cwd: join(dir, "home", "work") }) ?? raw, own);

	test("the files, their locks, temp files and generations, existing or not, as the target or a parent", () => {
		const hits = [
			"~/.omp/agent/a2a-bridge.json",
			"~/.omp/agent/a2a-bridge.json.lock",
			"~/.omp/agent/a2a-bridge.json.lock/x",
			"~/.omp/agent/a2a-bridge.json.4242.0a1b2c3d.tmp",
			"~/.omp/agent/a2a-bridge.log",
			"~/.omp/agent/a2a-bridge.log.1",
			"~/.omp/agent/a2a-bridge.log.3",
			"~/.omp/agent/a2a-bridge.log.2/deep/er",
			"~/.omp/agent/a2a-bridge.runtime.json",
			"~/.omp/agent/a2a-bridge.runtime.json.lock/x",
		];
		for (const h of hits) expect([h, at(h)]).toEqual([h, expect.stringContaining("the bridge's own file")]);
		const misses = [
			"~/.omp/agent/a2a-bridge.jsonx",
			"~/.omp/agent/other.json",
			"~/.omp/agent/models.yml",
			"~/a2a-bridge.json",
			"~/work/a2a-bridge.log.1",
		];
		for (const m of misses) expect([m, at(m)]).toEqual([m, null]);
	});

	test("any spelling: relative segments, doubled slashes, a trailing slash, upper case", () => {
		const spellings = [
			"../.omp/agent/a2a-bridge.json.lock/x",
			"~/.omp//agent///a2a-bridge.log.1",
			"~/.omp/./agent/../agent/a2a-bridge.json/",
			"~/.omp/agent/A2A-Bridge.JSON.LOCK/x",
			"~/.OMP/Agent/a2a-bridge.log.2",
			`${agent}/a2a-bridge.runtime.json.lock`,
		];
		for (const s of spellings) expect([s, at(s)]).toEqual([s, expect.stringContaining("own file")]);
	});

	test("through links: a linked parent directory, a link to a lock not yet made, a link chain, a hard link", () => {
		symlinkSync(agent, join(dir, "home", "work", "agent-link"));
		symlinkSync(join(agent, "a2a-bridge.json.lock"), join(dir, "home", "work", "lock-link"));
		symlinkSync(join(dir, "home", "work", "lock-link"), join(dir, "home", "work", "chain"));
		symlinkSync("../.omp/agent/a2a-bridge.log.3", join(dir, "home", "work", "relative-link"));
		linkSync(join(agent, "a2a-bridge.json"), join(dir, "home", "work", "twin.json"));
		for (const s of [
			"agent-link/a2a-bridge.json.lock/x",
			"agent-link/a2a-bridge.log.1",
			"lock-link",
			"lock-link/x",
			"chain/x/y",
			"relative-link",
			"twin.json",
		]) {
			expect([s, at(s)]).toEqual([s, expect.stringContaining("own file")]);
		}
	});

	test("staging-shaped names, in any case, as the target or a parent", () => {
		for (const s of [
			`.a2a-staging-${"0".repeat(32)}`,
			`x/.a2a-staging-${"f".repeat(32)}-${"1".repeat(16)}.77`,
			".A2A-Staging-whatever/child",
		]) {
			expect([s, at(s)]).toEqual([s, expect.stringContaining("staging name")]);
		}
		expect(at(".a2a-stagingx")).toBeNull();
	});

	test("reachedPath follows links component by component, dangling too; missing parts are taken as written", () => {
		const w = join(dir, "home", "work");
		symlinkSync(join(dir, "nowhere", "deeper"), join(w, "dangling"));
		symlinkSync("sub", join(w, "rel"));
		expect(reachedPath(join(w, "dangling", "x"))).toBe(join(dir, "nowhere", "deeper", "x"));
		expect(reachedPath(join(w, "rel", "..", "f"))).toBe(join(w, "f"));
		expect(reachedPath(join(w, "missing", "a"))).toBe(join(w, "missing", "a"));
		// A chain of links to a file, and a link whose `..` is taken where the linked directory really is.
		writeFileSync(join(w, "real"), "r");
		symlinkSync(join(w, "real"), join(w, "l1"));
		symlinkSync(join(w, "l1"), join(w, "l2"));
		expect(reachedPath(join(w, "l2"))).toBe(join(w, "real"));
		mkdirSync(join(w, "x", "y"), { recursive: true });
		symlinkSync(join("x", "y"), join(w, "a"));
		symlinkSync(join("..", "f"), join(w, "x", "y", "up"));
		expect(reachedPath(join(w, "a", "up"))).toBe(join(w, "x", "f"));
	});
});
