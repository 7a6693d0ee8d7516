/**
 * The runtime file against a real host: written 0600 with the live URL while the bridge serves, found
 * by `npm run probe` with no argument, used to name the real port when a guessed one is refused, and
 * removed on a clean stop (left, and recognised as stale, after a SIGKILL).
 */
import { describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, Host, ROOT } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";
import { waitFor } from "../../helpers/wait.ts";

async function probe(host: Pick<Host, "home">, ...args: string[]): Promise<{ code: number; out: string }> {
	const { code, out, err } = await runCommand(
		["npm", "run", "--silent", "probe", ...(args.length > 0 ? ["--", ...args] : [])],
		{ cwd: ROOT, env: { HOME: host.home, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}` } },
	);
	return { code, out: out + err };
}

const runtimeFile = (host: Host) => join(host.home, ".omp", "agent", "a2a-bridge.runtime.json");

/** The bridge writes the file just after its port opens, which is what Host.start waits for. */
async function waitForRuntime(host: Host): Promise<string> {
	const file = runtimeFile(host);
	await waitFor(`${file} to be written`, () => existsSync(file), { timeoutMs: 10_000 });
	return file;
}

describe("runtime file and npm run probe", () => {
	test("written while serving, found with no argument, names the real port, removed on a clean stop", async () => {
		const host = await Host.start();
		try {
			const file = await waitForRuntime(host);
			expect(statSync(file).mode & 0o777).toBe(0o600);
			const info = JSON.parse(readFileSync(file, "utf8"));
			expect(info.hosts).toMatchObject([
				{ url: host.url, port: host.port, pid: host.proc.pid, start: expect.any(Number), cwd: host.cwd },
			]);
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

	test("a planted runtime file (symlink, loose mode, garbage, live pid of another start) never gets the token sent to its URL", async () => {
		// A listener standing in for whoever planted the file: it must see no request at all.
		const seen: string[] = [];
		const trap = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(req) {
				seen.push(req.headers.get("authorization") ?? "");
				return new Response("{}");
			},
		});
		const home = mkdtempSync(join(tmpdir(), "a2a-probe-hostile-"));
		const agent = join(home, ".omp", "agent");
		mkdirSync(agent, { recursive: true });
		writeFileSync(join(agent, "a2a-bridge.json"), JSON.stringify({ token: "t".repeat(43) }), { mode: 0o600 });
		const file = join(agent, "a2a-bridge.runtime.json");
		const entry = { url: `http://127.0.0.1:${trap.port}/`, port: trap.port, pid: process.pid, started: "x", cwd: "/" };
		const record = (change: Record<string, unknown> = {}) => JSON.stringify({ hosts: [{ ...entry, ...change }] });
		const info = record();
		const cases: Array<[string, () => void, RegExp]> = [
			[
				"symlink",
				() => {
					writeFileSync(join(home, "elsewhere.json"), info, { mode: 0o600 });
					symlinkSync(join(home, "elsewhere.json"), file);
				},
				/is a symlink; not used/,
			],
			["mode 644", () => writeFileSync(file, info, { mode: 0o644 }), /has mode 644, not 600; not used/],
			["garbage", () => writeFileSync(file, "\u0000{{", { mode: 0o600 }), /is not valid JSON; not used/],
			// Issue 20 item 7: a well-formed 0600 file of this user whose pid is a live process of this user
			// (this test runner) is still not the bridge's: no start time, or another start time (a reused pid).
			["no start time", () => writeFileSync(file, info, { mode: 0o600 }), /without its start time.*nothing sent/],
			[
				"reused pid",
				() => writeFileSync(file, record({ start: 1_000 }), { mode: 0o600 }),
				/a process that started at another time \(a reused pid\); not used, nothing sent/,
			],
			[
				"pid 1",
				() => writeFileSync(file, record({ pid: 1, start: 1_000 }), { mode: 0o600 }),
				/names pid 1, (another user's process|a process that started at another time)/,
			],
		];
		try {
			for (const [name, plant, why] of cases) {
				rmSync(file, { force: true });
				plant();
				const r = await probe({ home });
				expect(r.out, name).toMatch(why);
				expect(r.code, name).toBe(1);
			}
			expect(seen).toEqual([]);
		} finally {
			trap.stop(true);
			rmSync(home, { recursive: true, force: true });
		}
	}, 60_000);

	test("after a SIGKILL the file stays and is recognised as stale", async () => {
		const host = await Host.start();
		try {
			await waitForRuntime(host);
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
