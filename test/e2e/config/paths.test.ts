/**
 * One spelling per own path, and edits through any name (contract §19; issue 38 findings 2 and 4), against
 * real hosts. A host started with relative `A2A_BRIDGE_CONFIG` / `A2A_BRIDGE_AUDIT` refuses every spelling
 * of its own files as `/blob` targets (second channel: the files on disk, byte for byte, and the token a
 * forged config would add); a config kept as a symlink is edited through the link or the real file by
 * `npm run token`, which names the running host, and the host applies it and a hand edit of the real file
 * and a re-pointed link (second channel: a raw request with the token, 401 or 200).
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { auditRecords } from "../../helpers/audit.ts";
import { canConnect, freePort, Host, initializeStatus, ROOT } from "../../helpers/host.ts";
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

const status = (url: string, bearer: string): Promise<number> => initializeStatus(url, bearer, "paths");

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
			// And a generated sample (the unit test in config/paths.test.ts runs 600), through real HTTP.
			...fc.sample(
				fc
					.tuple(
						fc.constantFrom("", "./", "../work/", `${work}/`, "../wl/", "~/wl/", "~/work/", "nowhere/../"),
						fc.constantFrom("", "./", "/", "x/../"),
						fc.constantFrom("bridge.json", "bridge.json.lock", "bridge.runtime.json", "audit.log", "audit.log.2"),
						fc.constantFrom("", "/.", "/x"),
					)
					.map(([dir, noise, name, end]) => `${dir}${noise}${name}${end}`.replace(/^\//, dir === "" ? "./" : "/")),
				12,
			),
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

/** `npm run --silent token -- …` as the README gives it, from `cwd`. */
const token = (home: string, args: string[], env: Record<string, string>, cwd = ROOT) =>
	runCommand(["npm", "run", "--silent", "token", "--", ...args], {
		cwd,
		env: { HOME: home, PATH: PATH_ENV, ...env },
		timeoutMs: 30_000,
	});

describe("finding 4: a config kept as a symlink (a dotfiles layout)", () => {
	test("npm run token through the link or the real file names the running host and the host applies it; a hand edit of the real file applies; a re-pointed link too", async () => {
		const dots = realpathSync(mkdtempSync(join(tmpdir(), "a2a-dots-")));
		dirs.push(dots);
		const real = join(dots, "dotfiles", "a2a.json");
		const link = join(dots, "agent", "a2a-bridge.json");
		mkdirSync(join(dots, "agent"));
		symlinkSync(real, link);
		const { h, url, owner } = await boot({ A2A_BRIDGE_CONFIG: link }, text => {
			mkdirSync(join(dots, "dotfiles"));
			writeFileSync(real, text, { mode: 0o600 });
			return {};
		});
		expect(await status(url, owner)).toBe(200);
		// The host's record sits by the file the link reaches, where either spelling finds it.
		expect(existsSync(join(dots, "dotfiles", "a2a.runtime.json"))).toBe(true);

		const added = await token(h.home, ["add", "laptop"], { A2A_BRIDGE_CONFIG: link });
		expect(added.code, added.err).toBe(0);
		expect(added.out).toContain(`the running host (pid ${h.proc.pid} at ${url}) apply it within a second`);
		const laptop = added.out.trim().split("\n").at(-1) ?? "";
		await until("the token added through the link is live", async () => (await status(url, laptop)) === 200);
		expect(lstatSync(link).isSymbolicLink()).toBe(true);

		// The real file's name, as the old advice said: the same host is found, and the revocation reaches it.
		const revoked = await token(h.home, ["revoke", "laptop"], { A2A_BRIDGE_CONFIG: real });
		expect(revoked.code, revoked.err).toBe(0);
		expect(revoked.out).not.toContain("no host runs");
		expect(revoked.out).toContain(`pid ${h.proc.pid}`);
		await until("the revoked token is refused", async () => (await status(url, laptop)) === 401);

		// A hand edit of the real file (an editor writing in place) applies.
		const hand = secret();
		const edited = JSON.parse(readFileSync(real, "utf8")) as Record<string, unknown>;
		writeFileSync(real, JSON.stringify({ ...edited, tokens: [{ name: "hand", token: hand }] }, null, "\t"));
		await until("the hand-edited token is live", async () => (await status(url, hand)) === 200);

		// The link re-pointed at another file (atomically, as dotfile managers do): its tokens apply, and
		// npm run token on the link finds the host there.
		const other = join(dots, "dotfiles", "b.json");
		const moved = secret();
		writeFileSync(other, JSON.stringify({ ...edited, tokens: [{ name: "moved", token: moved }] }, null, "\t"), {
			mode: 0o600,
		});
		symlinkSync(other, `${link}.new`);
		renameSync(`${link}.new`, link);
		await until("the re-pointed link's token is live", async () => (await status(url, moved)) === 200);
		expect(await status(url, hand)).toBe(401);
		const listed = await token(h.home, ["add", "ci"], { A2A_BRIDGE_CONFIG: link });
		expect(listed.code, listed.err).toBe(0);
		expect(listed.out).toContain(`pid ${h.proc.pid}`);
		const ci = listed.out.trim().split("\n").at(-1) ?? "";
		await until("a token added after the re-point is live", async () => (await status(url, ci)) === 200);
	}, 120_000);
});
