/**
 * The uninstall page's removal lines, as written, against what a real host leaves behind: a config with a named
 * token, an audit log, a runtime file left by a killed host, and the staging file of a cut PUT in a subdirectory.
 * Afterwards nothing of the bridge's is left under HOME (read back with a walk of the tree), while a user's file
 * that only looks like a staging name stays.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { shellBlocks } from "../../helpers/docs.ts";
import { callTool, Host, openSession } from "../../helpers/host.ts";
import { feed, rawUpload } from "../../helpers/raw-upload.ts";
import { runCommand } from "../../helpers/run.ts";
import { waitFor } from "../../helpers/wait.ts";

const PAGE = "docs/guide/uninstall.md";
let host: Host | undefined;

afterAll(async () => {
	if (host?.proc.exitCode === null) host.proc.kill("SIGKILL");
	host?.cleanup();
});

/** Every file under `dir`, relative to it. */
function walk(dir: string, base = dir): string[] {
	return readdirSync(dir).flatMap(name => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? walk(path, base) : [relative(base, path)];
	});
}

describe("uninstall: the page's lines remove everything the bridge left", () => {
	test("rm and find as written: config (secrets), audit, runtime file, staging files gone; a user's look-alike stays", async () => {
		host = await Host.start();
		const sid = await openSession(host);
		expect((await callTool(host, sid, "bash", { command: "echo hi" })).status).toBe(200);
		// A named token: the config then holds a second secret.
		const cfg = JSON.parse(readFileSync(host.configPath, "utf8"));
		writeFileSync(host.configPath, JSON.stringify({ ...cfg, tokens: [{ name: "laptop", token: "x".repeat(40) }] }));
		// A cut PUT in a subdirectory leaves its staging file beside the target.
		const dir = join(host.home, "work", "fw");
		mkdirSync(dir, { recursive: true });
		const target = join(dir, "image.bin");
		const { sock } = await rawUpload(host, "PUT", `/blob?path=${encodeURIComponent(target)}`, 4096);
		await feed(sock, new Uint8Array(1024));
		const staged = () => readdirSync(dir).filter(n => n.startsWith(".a2a-staging-"));
		await waitFor("the staging file", () => (staged().length > 0 ? true : undefined));
		sock.destroy();
		// A user's own file with the old fixed shape: not the bridge's to remove.
		const mine = join(host.home, "work", `.a2a-staging-${"a".repeat(32)}`);
		writeFileSync(mine, "mine");
		// Killed, not stopped: the runtime file stays behind, as after a crash.
		host.proc.kill("SIGKILL");
		await host.proc.exited;
		const agent = join(host.home, ".omp", "agent");
		const leftBefore = walk(host.home).filter(f => /(^|\/)(a2a-bridge\.|\.a2a-staging-)/.test(f));
		for (const f of ["a2a-bridge.json", "a2a-bridge.log", "a2a-bridge.runtime.json"]) {
			expect(leftBefore).toContain(relative(host.home, join(agent, f)));
		}
		expect(leftBefore.some(f => f.startsWith("work/fw/.a2a-staging-"))).toBe(true);

		const lines = shellBlocks(PAGE)
			.flat()
			.map(c => c.text)
			.filter(t => t.startsWith("rm -f ~/.omp/agent/a2a-bridge.") || t.startsWith("find ~ "));
		expect(lines).toHaveLength(2);
		for (const line of lines) {
			const r = await runCommand(["bash", "-euo", "pipefail", "-c", line], {
				cwd: host.home,
				env: { HOME: host.home, PATH: process.env.PATH ?? "" },
			});
			expect({ line, code: r.code, err: r.err }).toEqual({ line, code: 0, err: "" });
		}
		const left = walk(host.home).filter(f => /(^|\/)(a2a-bridge\.|\.a2a-staging-)/.test(f));
		expect(left).toEqual([relative(host.home, mine)]);
		expect(existsSync(join(agent, "models.yml"))).toBe(true);
	}, 120_000);
});
