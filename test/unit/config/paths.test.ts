/**
 * One spelling per own path (contract §19, issue 38 finding 2): the environment's config and audit paths, in
 * any spelling (relative, through linked directories, a config kept as a link), fixed at start to the form
 * own.ts compares; then random spellings of every own file are refused as `/blob` targets and random
 * spellings of files beside them are not. Generated (class 2): it fails when the start-time resolution is
 * left out, as it was (docs/testing.md, planted bugs 38.2).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { auditGenerations } from "../../../src/audit/rotate.ts";
import { resolveBlobPath } from "../../../src/blob/parse.ts";
import { canonicalPath, configName, namedPath, ownFiles } from "../../../src/config/paths.ts";
import { ownPathOf } from "../../helpers/own.ts";

let root: string;
let cwd: string;
const at = (...p: string[]) => join(root, ...p);

beforeAll(() => {
	root = realpathSync(mkdtempSync(join(tmpdir(), "a2a-paths-")));
	cwd = at("work");
	mkdirSync(at("real", "agent"), { recursive: true });
	mkdirSync(at("dots"), { recursive: true });
	mkdirSync(cwd);
	symlinkSync(at("real"), at("alias"));
	symlinkSync(at("real", "agent"), at("work", "up"));
	symlinkSync(cwd, at("wlink"));
	writeFileSync(at("real", "agent", "bridge.json"), "{}");
	writeFileSync(at("dots", "a2a.json"), "{}");
	symlinkSync(at("dots", "a2a.json"), at("work", "link.json"));
	writeFileSync(at("work", "audit.log"), "");
	writeFileSync(at("real", "agent", "notes.txt"), "");
	writeFileSync(at("work", "data.bin"), "");
	symlinkSync(at("real", "agent", "bridge.json"), at("work", "to-config"));
	symlinkSync(at("work", "audit.log"), at("work", "to-audit"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("paths fixed at start", () => {
	test("relative, dotted, doubled and linked spellings reach one absolute name; a config link keeps its name", () => {
		for (const raw of [
			"up/bridge.json",
			"../alias/agent//bridge.json",
			"./up/./bridge.json",
			at("alias/agent/bridge.json"),
		])
			expect([raw, canonicalPath(raw, cwd)]).toEqual([raw, at("real", "agent", "bridge.json")]);
		expect(canonicalPath("audit.log/.", cwd)).toBe(at("work", "audit.log"));
		expect(configName("link.json", cwd)).toEqual({
			given: `${cwd}/link.json`,
			link: at("work", "link.json"),
			file: at("dots", "a2a.json"),
		});
		expect(namedPath("../wlink/link.json", cwd)).toBe(at("work", "link.json"));
		// A name not made yet is taken as written below its linked directory.
		expect(canonicalPath("up/new.json", cwd)).toBe(at("real", "agent", "new.json"));
	});
});

/** The environment's spellings of the two configs (a plain file; a link into a dotfiles directory) and of the audit log. */
const configEnv = fc.constantFrom(
	"up/bridge.json",
	"../alias/agent/bridge.json",
	"./up/.//bridge.json",
	"../real/agent/bridge.json",
	"link.json",
	"./link.json",
	"../wlink/link.json",
);
const auditEnv = fc.constantFrom("audit.log", "./audit.log", "../wlink/audit.log", "../work/./audit.log");

/** Spellings of a directory from the cwd (relative, `~/`, absolute, through links). */
const dirSpellings: Record<string, string[]> = {
	agent: ["up", "../real/agent", "../alias/agent", "~/alias/agent", "~/real/agent", "up/../up", "ROOT/alias/agent"],
	dots: ["../dots", "~/dots", "ROOT/dots", "./../dots"],
	work: [".", "", "../wlink", "~/work", "ROOT/wlink", "./."],
};

/** Random lexical noise the kernel and the bridge both read through: `./`, doubled slashes, `x/..` detours. */
const noisy = (parts: string[], noise: number[]): string =>
	parts
		.map((p, i) => {
			const n = noise[i % noise.length] ?? 0;
			return n === 1 ? `./${p}` : n === 2 ? `${p}/` : n === 3 ? `nowhere/../${p}` : p;
		})
		.join("/");

const spelling = (dir: string, name: string, tail: string) =>
	fc
		.record({
			prefix: fc.constantFrom(...(dirSpellings[dir] ?? [])),
			noise: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
			end: fc.constantFrom("", "/.", "/./", tail),
		})
		.map(({ prefix, noise, end }) => {
			// `~` and the root stay first; noise goes between the parts after them.
			const parts = [...(prefix === "" ? [] : prefix.replace("ROOT", root).split("/")), name];
			const head = parts[0] === "~" || parts[0] === "" ? `${parts.shift()}/` : "";
			const body = noisy(
				parts.filter(p => p !== ""),
				noise,
			).replace(/\/+$/, "");
			return `${head}${body}${end}`;
		});

/** Own files as the directory and name a write reaches, for the config the env names. */
const ownTargets = (configRaw: string): Array<[string, string]> => {
	const [dir, name] = configRaw.includes("link.json") ? ["dots", "a2a"] : ["agent", "bridge"];
	return [
		[dir, `${name}.json`],
		[dir, `${name}.json.lock`],
		[dir, `${name}.json.4242.0a1b2c3d.tmp`],
		[dir, `${name}.runtime.json`],
		[dir, `${name}.runtime.json.lock`],
		["work", "audit.log"],
		["work", "audit.log.1"],
		["work", "audit.log.3"],
	];
};

describe("generated: every spelling of every own path is refused as a /blob target (class 2)", () => {
	const own = (configRaw: string, auditRaw: string) => {
		const name = configName(configRaw, cwd);
		return ownFiles(name, [name.file], auditGenerations(canonicalPath(auditRaw, cwd)));
	};
	const refused = (raw: string, list: string[]) => ownPathOf(resolveBlobPath(raw, { home: root, cwd }) ?? raw, list);

	test("own files in random spellings -> refused; files beside them in the same spellings -> not", () => {
		fc.assert(
			fc.property(configEnv, auditEnv, fc.integer({ min: 0, max: 7 }), fc.gen(), (configRaw, auditRaw, pick, g) => {
				const list = own(configRaw, auditRaw);
				const [dir, name] = ownTargets(configRaw)[pick] as [string, string];
				const hit = g(spelling, dir, name, "/child");
				expect([hit, refused(hit, list)]).toEqual([hit, expect.stringMatching(/own file|not an absolute/)]);
				const miss = g(spelling, dir, dir === "work" ? "data.bin" : "notes.txt", "");
				expect([miss, refused(miss, list)]).toEqual([miss, null]);
			}),
			{ numRuns: 600 },
		);
	});

	test("through a link to the file, and the config's own link name", () => {
		for (const configRaw of ["up/bridge.json", "link.json"]) {
			const list = own(configRaw, "audit.log");
			for (const raw of ["to-audit", "./to-audit", "~/wlink/to-audit"])
				expect([raw, refused(raw, list)]).toEqual([raw, expect.stringContaining("own file")]);
		}
		for (const raw of ["link.json", "~/work/link.json.lock", "../dots/a2a.json"])
			expect([raw, refused(raw, own("link.json", "audit.log"))]).toEqual([raw, expect.stringContaining("own file")]);
		expect(refused("to-config", own("up/bridge.json", "audit.log"))).toContain("own file");
	});

	test("an own path that is still relative refuses every write (never compared as if it began at /)", () => {
		expect(refused("data.bin", ["bridge.json"])).toContain("bridge.json is not an absolute path");
	});
});
