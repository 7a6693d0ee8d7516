/**
 * `npm run demo:lab` as the README gives it: the lab story against the simulated board, both ends on this
 * machine, no API key, in under a minute; each step printed and checked against the board's own record,
 * everything in a throwaway HOME that is removed after.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";

test("npm run demo:lab: flash, console, build and artifact through the bridge, each step checked, under a minute", async () => {
	const home = mkdtempSync(join(tmpdir(), "a2a-demo-lab-user-"));
	const started = Date.now();
	const { code, out, err } = await runCommand(["npm", "run", "--silent", "demo:lab"], {
		cwd: ROOT,
		env: {
			// An empty HOME: the demo must neither need nor touch the user's own ~/.omp.
			HOME: home,
			PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
			TMPDIR: process.env.TMPDIR ?? "/tmp",
		},
	});
	const seconds = (Date.now() - started) / 1000;
	const report = `${out}${err}`;
	for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(out, report).toContain(`demo:lab: ${n}/7 `);
	expect(out).toMatch(/progress: flash: 50% /);
	expect(out).toContain("ok: the board's record: booted the new image");
	expect(out).toMatch(
		/the board's record: line "version", line "watch", interrupt, line "echo mark-\d+", line "reboot", reboot, booted\n/,
	);
	expect(out).toMatch(/ok: the trap: a plain "login:" wait answered in \d+ ms, [\d.]+ s before the board booted again/);
	expect(out).toContain("ok: the second client saw the build exit 0");
	expect(out).toContain("ok: the copy's digest is the host's");
	expect(out).toMatch(/host stopped: closed its stdin; omp shut down \(exit 0\); port \d+ released; no process left/);
	expect(out.trimEnd().split("\n").at(-1)).toBe(
		"demo:lab: ok: flashed, consoled, built and fetched back through the bridge",
	);
	expect(code).toBe(0);
	// Under a minute on a quiet machine; the bound here leaves room for a loaded CI box.
	expect(seconds).toBeLessThan(90);
	const base = out.match(/throwaway HOME \((\S+)\/lab\)/)?.[1] ?? "";
	expect(base).toStartWith(join(process.env.TMPDIR ?? "/tmp", "a2a-demo-lab-"));
	expect(existsSync(base)).toBe(false);
	// No board or console left running: no process holds the demo's directory in its command line.
	const left = readdirSync("/proc").filter(p => {
		try {
			return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(base);
		} catch {
			return false;
		}
	});
	expect(left).toEqual([]);
	expect(readdirSync(home).filter(f => f !== ".npm" && f !== ".bun")).toEqual([]);
	rmSync(home, { recursive: true, force: true });
}, 120_000);
