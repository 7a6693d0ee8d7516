/**
 * `npm run demo` as the README gives it: a headless host and a second omp with the scripted model, the
 * caller's model asking for the host's bash once; everything in a throwaway HOME that is removed after.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";

test("npm run demo: the caller's scripted model calls the host's bash over MCP and the command ran on the host", async () => {
	const home = mkdtempSync(join(tmpdir(), "a2a-demo-user-"));
	const { code, out, err } = await runCommand(["npm", "run", "--silent", "demo"], {
		cwd: ROOT,
		env: {
			// An empty HOME: the demo must neither need nor touch the user's own ~/.omp.
			HOME: home,
			PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
			TMPDIR: process.env.TMPDIR ?? "/tmp",
		},
	});
	const marker = out.match(/call mcp__omp_host_bash \{"command":"echo (a2a-demo-[\w-]+) /)?.[1];
	expect(marker, out + err).toBeDefined();
	expect(out).toContain(`the host's answer reached the caller's model: "${marker}\\nran in `);
	expect(out).toContain(`check: host's work/a2a-demo.txt holds ${marker}; the answer carried it`);
	expect(out).toContain("the host's audit log (a2a-bridge.log): start bash, done bash");
	expect(out).toMatch(/host stopped: closed its stdin; omp shut down \(exit 0\); port \d+ released; no process left/);
	expect(out.trimEnd().split("\n").at(-1)).toBe("demo: ok: a second omp called the host's bash over MCP");
	expect(code).toBe(0);
	const base = out.match(/throwaway HOME \((\S+)\/host\)/)?.[1] ?? "";
	expect(base).toStartWith(join(process.env.TMPDIR ?? "/tmp", "a2a-demo-"));
	expect(existsSync(base)).toBe(false);
	// npm and Bun keep caches in HOME; omp's own state must not land there.
	expect(readdirSync(home).filter(f => f !== ".npm" && f !== ".bun")).toEqual([]);
	rmSync(home, { recursive: true, force: true });
}, 120_000);
