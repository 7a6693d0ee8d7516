/**
 * The runtime file against a real host: written 0600 with the live URL while the bridge serves, found
 * by `npm run probe` with no argument, used to name the real port when a guessed one is refused, and
 * removed on a clean stop (left, and recognised as stale, after a SIGKILL).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "bun";
import { freePort, Host, ROOT } from "../../helpers/host.ts";

async function probe(host: Host, ...args: string[]): Promise<{ code: number; out: string }> {
	const proc = spawn({
		cmd: ["npm", "run", "--silent", "probe", ...(args.length > 0 ? ["--", ...args] : [])],
		cwd: ROOT,
		env: { HOME: host.home, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}` },
		stdout: "pipe",
		stderr: "pipe",
	});
	const [code, out, err] = await Promise.all([
		proc.exited,
		new Response(proc.stdout).text(),
		new Response(proc.stderr).text(),
	]);
	return { code, out: out + err };
}

const runtimeFile = (host: Host) => join(host.home, ".omp", "agent", "a2a-bridge.runtime.json");

describe("runtime file and npm run probe", () => {
	test("written while serving, found with no argument, names the real port, removed on a clean stop", async () => {
		const host = await Host.start();
		try {
			const file = runtimeFile(host);
			expect(statSync(file).mode & 0o777).toBe(0o600);
			const info = JSON.parse(readFileSync(file, "utf8"));
			expect(info).toMatchObject({ url: host.url, port: host.port, pid: host.proc.pid });
			expect(readFileSync(file, "utf8")).not.toContain(host.token);

			const found = await probe(host);
			expect(found.out).toContain(`probe: ${host.url} (from ${file})`);
			expect(found.out).toMatch(/^probe: tools\/call bash "echo a2a-probe-\d+" -> a2a-probe-\d+$/m);
			expect(found.code).toBe(0);

			const wrong = await freePort();
			const guessed = await probe(host, `http://127.0.0.1:${wrong}/`);
			expect(guessed.out).toContain(
				`connection refused at http://127.0.0.1:${wrong}/; the running host serves ${host.url} (try: npm run probe)`,
			);
			expect(guessed.code).toBe(1);
		} finally {
			expect(await host.stop()).toBe(0);
		}
		try {
			expect(existsSync(runtimeFile(host))).toBe(false);
			const none = await probe(host);
			expect(none.out).toContain(`probe: no host is running (no ${runtimeFile(host)}; start one with npm run host)`);
			expect(none.code).toBe(1);
		} finally {
			host.cleanup();
		}
	}, 90_000);

	test("after a SIGKILL the file stays and is recognised as stale", async () => {
		const host = await Host.start();
		try {
			host.proc.kill("SIGKILL");
			await host.proc.exited;
			expect(existsSync(runtimeFile(host))).toBe(true);
			const stale = await probe(host, host.url);
			expect(stale.out).toContain(`connection refused at ${host.url}: no host is running`);
			expect(stale.out).toContain(`names pid ${host.proc.pid}, which has exited`);
			expect(stale.code).toBe(1);
		} finally {
			host.cleanup();
		}
	}, 60_000);
});
