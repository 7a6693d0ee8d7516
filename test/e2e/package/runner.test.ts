/**
 * scripts/test-parallel.ts, the runner behind `npm test`, on small fixture files: totals summed across
 * processes in bun's own format (what .ci/run parses), failures named with their file, and a file that
 * fails, crashes or hangs fails the run; a hung file is killed together with what it started.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../../helpers/host.ts";
import { processesWith } from "../../helpers/modern.ts";
import { runCommand } from "../../helpers/run.ts";
import { waitFor } from "../../helpers/wait.ts";

const RUNNER = join(ROOT, "scripts", "test-parallel.ts");
const fixture = (name: string) => `test/fixtures/runner-${name}.ts`;
/** What test/fixtures/runner-hang.ts labels its child command with. */
const HANG_LABEL = join(ROOT, "test", "fixtures", "runner-hang-child");
/** The lines .ci/run reads: bun's count lines. */
const COUNT = /^ *[0-9]+ (pass|fail)$/;

async function runner(files: string[], env: Record<string, string> = {}) {
	const r = await runCommand([process.execPath, RUNNER, ...files], {
		cwd: ROOT,
		env: { ...process.env, A2A_TEST_JOBS: "2", ...env },
		timeoutMs: 60_000,
	});
	const lines = r.out.trimEnd().split("\n");
	return { ...r, lines, tail: lines.slice(lines.lastIndexOf("") + 1) };
}

describe("scripts/test-parallel.ts", () => {
	setDefaultTimeout(60_000);
	test("green and red files -> exit 1; one totals block at the end, summed over both; the failure names its file", async () => {
		const r = await runner([fixture("green"), fixture("red")]);
		expect(r.code).toBe(1);
		expect(r.tail).toEqual([
			" 3 pass",
			" 1 skip",
			" 1 fail",
			" 4 expect() calls",
			expect.stringMatching(/^Ran 5 tests across 2 files\. \[[0-9.]+s\]$/),
			"3 passed, 1 failed, 1 skipped",
		]);
		// Each process's own count lines are not repeated, so a parser taking the last ones gets the totals.
		expect(r.lines.filter(l => COUNT.test(l))).toEqual([" 3 pass", " 1 fail"]);
		expect(r.lines.filter(l => /^\(fail\) test\/fixtures\/runner-red\.ts > fails on purpose \[/.test(l))).toHaveLength(
			1,
		);
		expect(r.lines.filter(l => /^== test\/fixtures\/runner-red\.ts: 1 pass, 0 skip, 1 fail \(/.test(l))).toHaveLength(
			1,
		);
	});

	test("green files only -> exit 0 and 0 fail", async () => {
		const r = await runner([fixture("green")]);
		expect(r.code).toBe(0);
		expect(r.tail.at(-1)).toBe("2 passed, 0 failed, 1 skipped");
	});

	test("a file whose process dies before bun reports -> exit 1, counted as a failure, named", async () => {
		const r = await runner([fixture("green"), fixture("crash")]);
		expect(r.code).toBe(1);
		expect(r.lines).toContain("(fail) test/fixtures/runner-crash.ts: ended (SIGKILL) without bun's summary");
		expect(r.tail.at(-1)).toMatch(/^3 passed, 1 failed, 1 skipped$/);
	});

	test("a file that never ends -> killed at A2A_TEST_FILE_TIMEOUT_S with the command it started; exit 1", async () => {
		const r = await runner([fixture("hang"), fixture("green")], { A2A_TEST_FILE_TIMEOUT_S: "3" });
		expect(r.code).toBe(1);
		expect(r.lines).toContain("(fail) test/fixtures/runner-hang.ts: killed after 3 s (A2A_TEST_FILE_TIMEOUT_S)");
		expect(r.tail.at(-1)).toBe("2 passed, 1 failed, 1 skipped");
		await waitFor("the hung file's child to be gone", () => processesWith(HANG_LABEL).length === 0, {
			timeoutMs: 5000,
			seen: () => processesWith(HANG_LABEL).join("\n"),
		});
	});

	test("the runner itself killed with SIGKILL -> its files' processes and what they started go too", async () => {
		const proc = Bun.spawn([process.execPath, RUNNER, fixture("hang")], {
			cwd: ROOT,
			stdout: "ignore",
			stderr: "ignore",
		});
		await waitFor("the hung file's child to run", () => processesWith(HANG_LABEL).length > 0, { timeoutMs: 30_000 });
		proc.kill("SIGKILL");
		await waitFor("the hung file's child to be gone", () => processesWith(HANG_LABEL).length === 0, {
			timeoutMs: 10_000,
			seen: () => processesWith(HANG_LABEL).join("\n"),
		});
	});

	test.each([
		["A2A_TEST_JOBS", "0", 32],
		["A2A_TEST_JOBS", "two", 32],
		["A2A_TEST_JOBS", "33", 32],
		["A2A_TEST_FILE_TIMEOUT_S", "-5", 86_400],
		["A2A_TEST_FILE_TIMEOUT_S", "1e3", 86_400],
		["A2A_TEST_FILE_TIMEOUT_S", "3000000", 86_400],
	])("%s=%s -> exit 2 naming the variable and the value, nothing run", async (name, value, max) => {
		const r = await runner([fixture("green")], { [name]: value });
		expect(r.code).toBe(2);
		expect(r.err).toContain(`${name} must be an integer in [1, ${max}], got '${value}'`);
		expect(r.out).not.toContain("pass");
	});
});
