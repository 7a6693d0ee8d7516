/**
 * One spelling per own path, and edits through any name (contract §19; issue 38 findings 2 and 4), against
 * real hosts. A host started with relative `A2A_BRIDGE_CONFIG` / `A2A_BRIDGE_AUDIT` refuses every spelling
 * of its own files as `/blob` targets (second channel: the files on disk, byte for byte, and the token a
 * forged config would add); a config kept as a symlink is edited through the link or the real file by
 * `npm run token`, which names the running host, and the host applies it and a hand edit of the real file
 * and a re-pointed link (second channel: a raw request with the token, 401 or 200).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { canConnect, freePort, Host, ROOT } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";

const hosts: Host[] = [];
const dirs: string[] = [];
afterEach(async () => {
	for (const h of hosts.splice(0)) {
		await h.stop();
		h.cleanup();
	}
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function until(what: string, pred: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await pred())) {
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
		await Bun.sleep(50);
	}
}

const secret = () => crypto.randomUUID() + crypto.randomUUID();
const PATH_ENV = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

/** `npm run --silent token -- …` as the README gives it. */
const _token = (home: string, args: string[], env: Record<string, string>, cwd = ROOT) =>
	runCommand(["npm", "run", "--silent", "token", "--", ...args], {
		cwd,
		env: { HOME: home, PATH: PATH_ENV, ...env },
		timeoutMs: 30_000,
	});

/** The status of an MCP initialize with `bearer`: 200 accepted, 401 refused. */
async function status(url: string, bearer: string): Promise<number> {
	const res = await fetch(url, {
		method: "POST",
		headers: {
			authorization: `Bearer ${bearer}`,
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
		},
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "initialize",
			params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "paths", version: "1" } },
		}),
		signal: AbortSignal.timeout(10_000),
	});
	await res.body?.cancel();
	return res.status;
}

/** A config's text: loopback, the given port and owner secret, and `extra`. */
const configText = (port: number, owner: string, extra: Record<string, unknown> = {}) =>
	JSON.stringify({ host: "127.0.0.1", port, token: owner, ...extra }, null, "\t");

/** Boots a host whose config `write` puts in place (given the port and owner secret) and waits for its port. */
async function boot(env: Record<string, string>, write: (text: string) => Record<string, string>) {
	const port = await freePort();
	const owner = secret();
	const h = await Host.start({ config: null, env, files: write(configText(port, owner)) });
	hosts.push(h);
	const url = `http://127.0.0.1:${port}/`;
	await until("the bridge listens", () => canConnect(port), 60_000);
	return { h, url, owner };
}

describe("finding 2: relative config and audit paths in the environment", () => {
	test("every spelling of the config, its lock and record, the audit log and its generations -> 403 own_file; the files unchanged; a forged token refused", async () => {
		const { h, url, owner } = await boot({ A2A_BRIDGE_CONFIG: "bridge.json", A2A_BRIDGE_AUDIT: "audit.log" }, text => ({
			"work/bridge.json": text,
		}));
		const work = realpathSync(h.cwd);
		// The relative names are the host's working directory's: its config is read there, its record and audit written there.
		expect(await status(url, owner)).toBe(200);
		expect(existsSync(join(work, "bridge.runtime.json"))).toBe(true);
		symlinkSync(work, join(h.home, "wl"));
		symlinkSync(join(work, "bridge.json"), join(work, "to-config"));
		const config = readFileSync(join(work, "bridge.json"), "utf8");
		const forged = secret();
		const forgedConfig = config.replace("{", `{\n\t"tokens": [{ "name": "evil", "token": "${forged}" }],`);
		const spellings = [
			"bridge.json",
			"./bridge.json",
			"../work/bridge.json",
			`${work}//bridge.json`,
			"../wl/bridge.json",
			"~/wl/./bridge.json",
			"nowhere/../bridge.json",
			"to-config",
			"bridge.json.lock",
			"bridge.json.lock/x",
			"bridge.runtime.json",
			"./bridge.runtime.json.lock",
			"audit.log",
			"../wl/audit.log.1",
			"audit.log.3/x",
		];
		for (const path of spellings) {
			for (const method of ["PUT", "POST"]) {
				const audit = existsSync(join(work, "audit.log")) ? readFileSync(join(work, "audit.log"), "utf8") : "";
				const res = await fetch(new URL(`/blob?path=${encodeURIComponent(path)}`, url), {
					method,
					headers: { authorization: `Bearer ${owner}` },
					body: path.includes("bridge.json") ? forgedConfig : '{"forged":"line"}\n',
					signal: AbortSignal.timeout(30_000),
				});
				expect([path, method, res.status]).toEqual([path, method, 403]);
				expect(((await res.json()) as { code: string }).code).toBe("own_file");
				// Second channel: the files on disk.
				expect(readFileSync(join(work, "bridge.json"), "utf8")).toBe(config);
				expect(readFileSync(join(work, "audit.log"), "utf8").startsWith(audit)).toBe(true);
			}
		}
		for (const made of ["bridge.json.lock", "audit.log.3", "bridge.runtime.json.lock"])
			expect([made, existsSync(join(work, made))]).toEqual([made, false]);
		// The refusals were audited in the working directory's audit.log, and nothing forged landed there.
		const records = auditRecords<{ tool: string; isError: boolean }>(join(work, "audit.log"));
		expect(records.filter(r => r.tool === "blob:write" && r.isError).length).toBe(spellings.length * 2);
		expect(readFileSync(join(work, "audit.log"), "utf8")).not.toContain('"forged"');
		// Given time to apply an edit (it would within a second), the forged token is still refused.
		await Bun.sleep(1500);
		expect(await status(url, forged)).toBe(401);
	}, 120_000);
});
