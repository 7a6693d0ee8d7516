/**
 * Issue 38 rule 5 (attack 2): which directories the config watch covers for a given chain. Every link met on
 * the name's way, in the directory that holds it, and the reached file's directory; hostile: loops, more links
 * than the resolver follows, a link to `/`, relative links. Then the watch itself, on real directories: a
 * re-pointed middle link and a re-pointed config directory move the config, and later edits there are seen.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configName, resolutionHops } from "../../../src/config/paths.ts";
import { watchConfigFile } from "../../../src/config/watch.ts";

let root: string;
const at = (...p: string[]) => join(root, ...p);

beforeAll(() => {
	root = realpathSync(mkdtempSync(join(tmpdir(), "a2a-hops-")));
	for (const d of ["agent", "links", "v1", "v2", "loop", "long", "rel/sub"]) mkdirSync(at(d), { recursive: true });
	writeFileSync(at("v1", "a2a.json"), "{}");
	writeFileSync(at("v2", "a2a.json"), "{}");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Re-points link `link` to `to` atomically, as dotfile managers do. */
function repoint(link: string, to: string): void {
	symlinkSync(to, `${link}.new`);
	renameSync(`${link}.new`, link);
}

describe("resolutionHops: the directories a config watch covers", () => {
	test("a chain name -> current -> v1: each link's directory for its name, then the file's", () => {
		symlinkSync(at("v1", "a2a.json"), at("links", "current.json"));
		symlinkSync(at("links", "current.json"), at("agent", "a2a-bridge.json"));
		expect(resolutionHops(at("agent", "a2a-bridge.json"))).toEqual([
			{ dir: at("agent"), name: "a2a-bridge.json" },
			{ dir: at("links"), name: "current.json" },
			{ dir: at("v1"), name: "a2a.json" },
		]);
	});

	test("a linked directory on the way is watched in its parent, under its own name", () => {
		symlinkSync(at("v1"), at("dirlink"));
		expect(resolutionHops(at("dirlink", "a2a.json"))).toEqual([
			{ dir: root, name: "dirlink" },
			{ dir: at("v1"), name: "a2a.json" },
		]);
	});

	test("relative links are taken from the directory that holds them", () => {
		symlinkSync("../../v2", at("rel", "sub", "up"));
		symlinkSync("sub/up/a2a.json", at("rel", "cfg.json"));
		expect(resolutionHops(at("rel", "cfg.json"))).toEqual([
			{ dir: at("rel"), name: "cfg.json" },
			{ dir: at("rel", "sub"), name: "up" },
			{ dir: at("v2"), name: "a2a.json" },
		]);
	});

	test("a loop ends within the resolver's 40 links, each pair once", () => {
		symlinkSync(at("loop", "b"), at("loop", "a"));
		symlinkSync(at("loop", "a"), at("loop", "b"));
		const hops = resolutionHops(at("loop", "a"));
		expect(hops.length).toBeLessThanOrEqual(41);
		expect(hops.slice(0, 2)).toEqual([
			{ dir: at("loop"), name: "a" },
			{ dir: at("loop"), name: "b" },
		]);
	});

	test("a chain of 45 links: at most 40 followed, 41 pairs at most", () => {
		writeFileSync(at("long", "end.json"), "{}");
		symlinkSync(at("long", "end.json"), at("long", "l45"));
		for (let i = 44; i >= 1; i--) symlinkSync(at("long", `l${i + 1}`), at("long", `l${i}`));
		const hops = resolutionHops(at("long", "l1"));
		expect(hops.length).toBe(41);
		expect(hops[0]).toEqual({ dir: at("long"), name: "l1" });
		expect(hops[40]).toEqual({ dir: at("long"), name: "l41" });
	});

	test("a link to / : its own directory is watched, `/` itself never named", () => {
		symlinkSync("/", at("toroot"));
		expect(resolutionHops(at("toroot"))).toEqual([{ dir: root, name: "toroot" }]);
		expect(resolutionHops("/")).toEqual([]);
		expect(resolutionHops(at("toroot", "etc"))).toEqual([
			{ dir: root, name: "toroot" },
			{ dir: "/", name: "etc" },
		]);
	});

	test("a relative path is refused, not watched from somewhere", () => {
		expect(() => resolutionHops("agent/a2a-bridge.json")).toThrow("not an absolute path");
	});
});

/** The files `watchConfigFile` reports, until `want` is among them or 3 s pass. */
async function seen(files: string[], want: string): Promise<boolean> {
	const deadline = Date.now() + 3000;
	while (Date.now() < deadline && !files.includes(want)) await Bun.sleep(50);
	return files.includes(want);
}

describe("watchConfigFile follows every link on the way", () => {
	test("the middle link of a chain re-pointed: the new file is reported, then its edits", async () => {
		const d = realpathSync(mkdtempSync(join(root, "chain-")));
		for (const s of ["agent", "links", "v1", "v2"]) mkdirSync(join(d, s));
		writeFileSync(join(d, "v1", "a.json"), "{}");
		writeFileSync(join(d, "v2", "a.json"), "{}");
		symlinkSync(join(d, "v1", "a.json"), join(d, "links", "current.json"));
		symlinkSync(join(d, "links", "current.json"), join(d, "agent", "a2a-bridge.json"));
		const files: string[] = [];
		const logs: string[] = [];
		const stop = watchConfigFile(
			configName(join(d, "agent", "a2a-bridge.json"), "/"),
			f => files.push(f),
			l => logs.push(l),
		);
		try {
			repoint(join(d, "links", "current.json"), join(d, "v2", "a.json"));
			expect(await seen(files, join(d, "v2", "a.json"))).toBe(true);
			files.length = 0;
			writeFileSync(join(d, "v2", "a.json"), '{"x":1}');
			expect(await seen(files, join(d, "v2", "a.json"))).toBe(true);
			expect(logs).toEqual([]);
		} finally {
			stop();
		}
	});

	test("the config directory kept as a link re-pointed: the new directory's file and its edits are reported", async () => {
		const d = realpathSync(mkdtempSync(join(root, "dir-")));
		for (const s of ["a", "b"]) mkdirSync(join(d, s));
		writeFileSync(join(d, "a", "a2a-bridge.json"), "{}");
		writeFileSync(join(d, "b", "a2a-bridge.json"), "{}");
		symlinkSync(join(d, "a"), join(d, "agent"));
		const files: string[] = [];
		const stop = watchConfigFile(
			configName(join(d, "agent", "a2a-bridge.json"), "/"),
			f => files.push(f),
			() => {},
		);
		try {
			repoint(join(d, "agent"), join(d, "b"));
			expect(await seen(files, join(d, "b", "a2a-bridge.json"))).toBe(true);
			files.length = 0;
			writeFileSync(join(d, "b", "a2a-bridge.json"), '{"x":1}');
			expect(await seen(files, join(d, "b", "a2a-bridge.json"))).toBe(true);
		} finally {
			stop();
		}
	});

	test("an unwatchable directory on the way is said once, however many events", async () => {
		const d = realpathSync(mkdtempSync(join(root, "gone-")));
		const logs: string[] = [];
		const stop = watchConfigFile(
			configName(join(d, "missing", "a2a-bridge.json"), "/"),
			() => {},
			l => logs.push(l),
		);
		stop();
		expect(logs.length).toBe(1);
		expect(logs[0]).toContain(`${join(d, "missing")} not watched`);
	});
});
