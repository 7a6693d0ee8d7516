/**
 * The docs audit of 2026-12-03: each claim held where a file decides it.
 * One of the claims tests: each docs claim held to the file that decides it, so the next drift fails here.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as holdings from "../../../src/core/holdings.ts";
import * as progress from "../../../src/core/progress.ts";
import { constIn, ROOT, read } from "../../helpers/claims.ts";

describe("the docs audit of 2026-12-03, held where a file decides the claim", () => {
	const testing = read("docs/testing.md");
	const WORDS = ["zero", "one", "two", "three", "four", "five", "six"];

	test("testing.md: the files that run last, alone, are the runner's ALONE set", () => {
		const set = /const ALONE = new Set\(\[([\s\S]*?)\]\)/.exec(read("scripts/test-parallel.ts"))?.[1] ?? "";
		const files = [...set.matchAll(/"test\/e2e\/(?:core\/)?([^"]+)"/g)].map(m => m[1] ?? "");
		expect(files.length).toBeGreaterThan(2);
		const para = testing.slice(testing.indexOf("files run last, one at a time"));
		const count = /(\w+) files run last, one at a time/.exec(testing)?.[1]?.toLowerCase();
		expect(count).toBe(WORDS[files.length]);
		// Named by its path under test/e2e/ or any shorter tail of it (`headless/demo.test.ts` as `demo.test.ts`).
		const named = (f: string) =>
			f.split("/").some((_, i, p) => para.slice(0, 900).includes(`\`${p.slice(i).join("/")}\``));
		for (const f of files) expect({ f, named: named(f) }).toEqual({ f, named: true });
	});

	test("testing.md: the timers check's timeout and call length are the script's", () => {
		const timers = "test/clients/timers.check.ts";
		expect(testing).toContain(`per-call timeout to ${constIn(timers, "TIMER_S")} s`);
		expect(testing).toContain(`makes a ${constIn(timers, "CALL_S")} s call`);
	});

	test("testing.md: the conformance suite's version is the pinned one, and both suite files are named", () => {
		const pinned = (JSON.parse(read("package.json")) as { devDependencies: Record<string, string> }).devDependencies;
		expect(testing).toContain(`\`@modelcontextprotocol/conformance\` ${pinned["@modelcontextprotocol/conformance"]}`);
		for (const f of ["conformance.test.ts", "conformance-2026.test.ts"])
			expect(testing).toContain(`test/e2e/core/${f}`);
	});

	test("testing.md's npm pack list names every shipped file that is not code", () => {
		const files = (JSON.parse(read("package.json")) as { files: string[] }).files;
		const list = testing.slice(
			testing.indexOf("`npm pack` would ship"),
			testing.indexOf("`npm pack` would ship") + 400,
		);
		for (const f of files.filter(f => !/^(src|extensions|scripts)\//.test(f)))
			expect({ f, named: list.includes(f === "schema/" ? "schema/a2a-bridge.schema.json" : f) }).toEqual({
				f,
				named: true,
			});
	});

	test("npm test's prerequisites: in both quick starts and in testing.md's setup, then the line that installs them", () => {
		/** The prose from `npm test`'s first mention up to the install line, and the install line itself. */
		const parts = (text: string) => {
			const at = text.indexOf("apt-get install ");
			return [text.slice(text.lastIndexOf("`npm test`", at), at), text.slice(at, text.indexOf("`", at))];
		};
		for (const file of ["README.md", "README_ZN.md", "docs/testing.md"]) {
			const [prose = "", line = ""] = parts(read(file));
			for (const need of [
				"root",
				"`git http-backend`",
				"util-linux",
				"`setsid",
				"`script`",
				"curl",
				"openssl",
				"jq",
				"`venv`",
				"pip",
			])
				expect({ file, need, named: prose.includes(need) }).toEqual({ file, need, named: true });
			expect(line.trim().split(" ").slice(2).sort()).toEqual(
				["git", "util-linux", "curl", "openssl", "jq", "python3-venv", "python3-pip"].sort(),
			);
		}
	});

	test("architecture.md names every script, and the scripts the package ships are package.json's", () => {
		const arch = read("docs/architecture.md");
		const missing = readdirSync(join(ROOT, "scripts")).filter(
			f => !arch.includes(`\`${f}\``) && !arch.includes(`scripts/${f}`),
		);
		expect(missing).toEqual([]);
		const shipped = (JSON.parse(read("package.json")) as { files: string[] }).files
			.filter(f => f.startsWith("scripts/"))
			.map(f => `\`${f.slice("scripts/".length)}\``);
		const para = arch.slice(
			arch.indexOf("The package ships all of `src/`"),
			arch.indexOf("The other scripts sit beside"),
		);
		expect([...new Set([...para.matchAll(/`[a-z-]+\.ts`/g)].map(m => m[0]))].sort()).toEqual(shipped.sort());
	});

	test("performance.md's list of replaced bench files: each gone, and every gone file the old runs name is listed", () => {
		const perf = read("docs/performance.md");
		const old = perf.slice(perf.indexOf("## Earlier runs"));
		const list = /the files they name \(([^)]*)\)/.exec(old.replace(/\n/g, " "))?.[1] ?? "";
		const listed = [...list.matchAll(/bench\/[\w.-]+\.ts/g)].map(m => m[0]);
		const here = new Set(readdirSync(join(ROOT, "bench")).map(f => `bench/${f}`));
		expect(listed.filter(f => here.has(f))).toEqual([]);
		const gone = [...new Set([...old.matchAll(/bench\/[\w.-]+\.ts/g)].map(m => m[0]))].filter(f => !here.has(f));
		expect(gone.filter(f => !listed.includes(f))).toEqual([]);
	});

	test("the config name rule: README and README_ZN state the validator's first-character rule", () => {
		expect(read("src/config/fields.ts")).toContain("starting with a letter or digit");
		expect(read("README.md")).toMatch(/^\| `name` \| 1–48 of `A-Z a-z 0-9 _ -`, starting with a letter or a digit,/m);
		expect(read("README_ZN.md")).toMatch(/^\| `name` \| 1–48 个 `A-Z a-z 0-9 _ -` 字符，以字母或数字开头，/m);
	});

	test("SSE is chosen by every Accept type the docs name, and the docs name every type that chooses it", () => {
		const named = ["text/event-stream", "*/*", "text/*"];
		for (const t of named) expect({ t, sse: progress.acceptsEventStream(t) }).toEqual({ t, sse: true });
		expect(progress.acceptsEventStream("application/json")).toBe(false);
		const md = read("docs/protocol.md");
		const bullet = md.slice(md.indexOf("- **SSE**:"), md.indexOf("- **SSE**:") + 300);
		for (const t of named) expect({ t, named: bullet.includes(`\`${t}\``) }).toEqual({ t, named: true });
		for (const f of ["README.md", "README_ZN.md"]) for (const t of named) expect(read(f)).toContain(`\`${t}\``);
	});

	test("protocol.md: the task statusMessage tail, the 404 body and every per-token share as reserved plus a pool", () => {
		const md = read("docs/protocol.md");
		expect(md).toContain(`\`…\` and the last ${constIn("src/core/tasks.ts", "STATUS_MESSAGE_MAX_CHARS")} characters`);
		expect(md).toContain("`not found\\n`");
		expect(read("src/core/errors.ts")).toContain('new Response("not found\\n"');
		// The share rule (issue 38): ⌊N / live⌋ reserved each, the rest one shared pool, never more than N in all.
		for (const [total, live] of [
			[4, 5],
			[64, 3],
			[256, 1],
		] as const) {
			const { each, pool } = holdings.shareOf(total, live);
			expect(each * live + pool).toBe(total);
		}
		for (const m of md.matchAll(/⌊\d+ \/ live tokens⌋[^.|]*/g))
			expect({ share: m[0].slice(0, 60), pooled: /reserved/.test(m[0]) }).toMatchObject({ pooled: true });
	});

	test("CHANGELOG's Unreleased bench entries give the rounds the bench takes by default", () => {
		const rounds = /BENCH_ROUNDS \?\? (\d+)/.exec(read("bench/table.ts"))?.[1];
		const unreleased = read("CHANGELOG.md").split(/^## /m)[1] ?? "";
		expect(unreleased).toContain(`takes ${rounds} rounds by default`);
		expect(unreleased).not.toMatch(/median of \d+ interleaved rounds/);
	});
});
