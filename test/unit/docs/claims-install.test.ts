/**
 * Claims of the install output and the CHANGELOG, held to package-lock.json and package.json.
 * One of the claims tests: each docs claim held to the file that decides it, so the next drift fails here.
 */
import { describe, expect, test } from "bun:test";
import { ROOT, read } from "../../helpers/claims.ts";

interface LockEntry {
	engines?: { node?: string };
	os?: string[];
	hasInstallScript?: boolean;
	optional?: boolean;
}
const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(read("package.json")) as { allowScripts: Record<string, boolean> };
/** The locked packages npm installs on this platform (optional ones for other systems are skipped). */
const here = Object.entries(lock.packages).filter(([path, e]) => path && (!e.os || e.os.includes(process.platform)));
const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

describe("install output (README: what `npm install` prints)", () => {
	const section = (file: string, from: string, to: string) => {
		const text = read(file);
		return text.slice(text.indexOf(from), text.indexOf(to, text.indexOf(from)));
	};

	test("the EBADENGINE list is exactly the locked packages whose engines exclude the Node the README tested", () => {
		const tested = /\| Node \| ≥ 20 \(tested: (\d+\.\d+)\)/.exec(read("README.md"))?.[1];
		expect(tested).toBeDefined();
		const warned = here
			.filter(([, e]) => e.engines?.node && !Bun.semver.satisfies(`${tested}.0`, e.engines.node))
			.map(([path]) => nameOf(path))
			.sort();
		expect(warned.length).toBeGreaterThan(0);
		for (const [file, from, to] of [
			["README.md", "**What `npm install` prints**", "Node 22.13 or later"],
			["README_ZN.md", "**`npm install` 会打印什么**", "Node 22.13 或更新版本"],
		] as const) {
			const named = [...section(file, from, to).matchAll(/`([@a-z0-9/.-]+)`/g)]
				.map(m => m[1] ?? "")
				.filter(n => !["npm install", "npm test", "bun run --bun"].includes(n) && !n.startsWith("npm"));
			expect({ file, named: [...new Set(named)].sort() }).toEqual({ file, named: warned });
		}
		// Past every engines floor, nothing warns: the README's "Node 22.13 or later prints none".
		for (const [path, e] of here) {
			for (const node of ["22.13.0", "24.0.0"]) {
				if (e.engines?.node)
					expect({ path, node, ok: Bun.semver.satisfies(node, e.engines.node) }).toMatchObject({ ok: true });
			}
		}
	});

	test("allowScripts decides every locked install script: approved when installed here, denied when optional", () => {
		const scripted = Object.entries(lock.packages).filter(([path, e]) => path && e.hasInstallScript);
		expect(Object.keys(pkg.allowScripts).sort()).toEqual(scripted.map(([path]) => nameOf(path)).sort());
		for (const [path, e] of scripted)
			expect({ path, allowed: pkg.allowScripts[nameOf(path)] }).toEqual({ path, allowed: !e.optional });
		for (const file of ["README.md", "README_ZN.md"]) {
			const text = read(file);
			for (const name of Object.keys(pkg.allowScripts))
				expect({ file, name, named: text.includes(`\`${name}\``) }).toEqual({ file, name, named: true });
		}
	});
});

describe("CHANGELOG: released versions a user can read", () => {
	const log = read("CHANGELOG.md");
	const heads = [...log.matchAll(/^## (.*)$/gm)].map(m => m[1] ?? "");
	const released = heads
		.slice(1)
		.map(h => /^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2}) \(commit ([0-9a-f]{7,40})\)$/.exec(h));

	test("Unreleased on top, then each release as `[x.y.z] - date (commit abc1234)`, newest first; package.json is the newest", () => {
		expect(heads[0]).toBe("[Unreleased]");
		expect(released.length).toBeGreaterThanOrEqual(2);
		for (const [i, m] of released.entries()) expect({ head: heads[i + 1], ok: m !== null }).toMatchObject({ ok: true });
		const versions = released.map(m => m?.[1] ?? "");
		const dates = released.map(m => m?.[2] ?? "");
		for (let i = 1; i < versions.length; i++) {
			expect(Bun.semver.order(versions[i - 1] ?? "", versions[i] ?? "")).toBe(1);
			expect((dates[i - 1] ?? "") >= (dates[i] ?? "")).toBe(true);
		}
		const version = (JSON.parse(read("package.json")) as { version: string }).version;
		expect(version).toBe(versions[0] ?? "");
		const lockRoot = JSON.parse(read("package-lock.json")) as {
			version: string;
			packages: Record<string, { version?: string }>;
		};
		expect([lockRoot.version, lockRoot.packages[""]?.version]).toEqual([version, version]);
		// The initialize example shows the package version the bridge really sends.
		expect(read("docs/protocol.md")).toContain(`"serverInfo": { "name": "omp-a2a-bridge", "version": "${version}" }`);
	});

	test("each release names the commit a user pins it by, and that commit's package.json is that version", () => {
		for (const m of released) {
			const [, version, , commit] = m ?? [];
			const shown = Bun.spawnSync(["git", "-C", ROOT, "show", `${commit}:package.json`]);
			expect({ commit, found: shown.exitCode === 0 }).toEqual({ commit, found: true });
			expect({ commit, version: JSON.parse(shown.stdout.toString()).version }).toEqual({ commit, version });
		}
	});

	test("an entry of an older release whose behaviour a newer one changed says so", () => {
		// Each pair: a phrase of a released entry, and the newer change that contradicts it.
		const changed: Array<[string, string]> = [
			["a `start` and a `done` record per call", "coalesced `refused` record"],
			["sessions (64, 24 h idle) bound to the token", "its share of the 64 sessions"],
		];
		const sections = log.split(/^## /m).slice(2);
		for (const [phrase, note] of changed) {
			const older = sections.findIndex(s => s.includes(phrase));
			if (older < 0) continue;
			const entry = (sections[older] ?? "").split("\n").find(l => l.includes(phrase)) ?? "";
			expect({ entry, says: /Changed in \d+\.\d+\.\d+/.test(entry) && entry.includes(note) }).toMatchObject({
				says: true,
			});
		}
	});
});

/** Every Markdown file a reader gets: the READMEs and docs/ (the site's generated folders left out). */
