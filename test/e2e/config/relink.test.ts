/**
 * Attack 2, rule 5 ("edits apply through any name", a re-pointed link): the dotfiles layouts the finding-4
 * test leaves out. A config name reaching its file through a chain of two links, the middle one re-pointed
 * (a dotfiles manager's `current` link), and a config whose directory is a link re-pointed at another
 * directory. Second channel: a raw initialize with the new file's token, 200 once applied.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canConnect, freePort, Host, initializeStatus } from "../../helpers/host.ts";

const hosts: Host[] = [];
const dirs: string[] = [];
afterEach(async () => {
	for (const h of hosts.splice(0)) {
		await h.stop();
		h.cleanup();
	}
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// An edit applies within a second on an idle machine; the full suite on 2 shared CPUs needs the slack.
const APPLY_MS = 15_000;

const secret = () => crypto.randomUUID() + crypto.randomUUID();

const status = (url: string, bearer: string): Promise<number> => initializeStatus(url, bearer, "relink");

async function until(pred: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
	const deadline = Date.now() + timeoutMs;
	while (Date.now() < deadline) {
		if (await pred()) return true;
		await Bun.sleep(100);
	}
	return false;
}

const configText = (port: number, owner: string, extra: Record<string, unknown> = {}) =>
	JSON.stringify({ host: "127.0.0.1", port, token: owner, ...extra }, null, "\t");

/** Re-points link `at` to `to` atomically, as dotfile managers do. */
function repoint(at: string, to: string): void {
	symlinkSync(to, `${at}.new`);
	renameSync(`${at}.new`, at);
}

async function boot(): Promise<{ url: string; owner: string; port: number }> {
	const port = await freePort();
	const owner = secret();
	return { url: `http://127.0.0.1:${port}/`, owner, port };
}

describe("attack2 rule 5: a re-pointed link the bridge does not watch", () => {
	test("a chain agent/a2a-bridge.json -> links/current.json -> v1/a2a.json; current re-pointed to v2: v2's token applies", async () => {
		const dots = realpathSync(mkdtempSync(join(tmpdir(), "a2a-relink-")));
		dirs.push(dots);
		for (const d of ["agent", "links", "v1", "v2"]) mkdirSync(join(dots, d));
		const { url, owner, port } = await boot();
		writeFileSync(join(dots, "v1", "a2a.json"), configText(port, owner), { mode: 0o600 });
		symlinkSync(join(dots, "v1", "a2a.json"), join(dots, "links", "current.json"));
		symlinkSync(join(dots, "links", "current.json"), join(dots, "agent", "a2a-bridge.json"));
		const h = await Host.start({ config: null, env: { A2A_BRIDGE_CONFIG: join(dots, "agent", "a2a-bridge.json") } });
		hosts.push(h);
		expect(await until(() => canConnect(port), 60_000)).toBe(true);
		expect(await status(url, owner)).toBe(200);
		// Control: an edit of the file the chain reaches at start applies (the watch works at all).
		const first = secret();
		writeFileSync(join(dots, "v1", "a2a.json"), configText(port, owner, { tokens: [{ name: "first", token: first }] }));
		expect(await until(async () => (await status(url, first)) === 200, APPLY_MS)).toBe(true);
		const moved = secret();
		writeFileSync(
			join(dots, "v2", "a2a.json"),
			configText(port, owner, { tokens: [{ name: "moved", token: moved }] }),
			{
				mode: 0o600,
			},
		);
		repoint(join(dots, "links", "current.json"), join(dots, "v2", "a2a.json"));
		const live = await until(async () => (await status(url, moved)) === 200, APPLY_MS);
		// A later edit of the file the name now reaches applies too.
		const later = secret();
		writeFileSync(
			join(dots, "v2", "a2a.json"),
			configText(port, owner, {
				tokens: [
					{ name: "moved", token: moved },
					{ name: "later", token: later },
				],
			}),
			{ mode: 0o600 },
		);
		const laterLive = await until(async () => (await status(url, later)) === 200, APPLY_MS);
		expect({ movedLive: live, laterLive }).toEqual({ movedLive: true, laterLive: true });
	}, 120_000);

	test("a config directory kept as a link (~/.omp/agent -> dotfiles/a), re-pointed at dotfiles/b: b's token applies", async () => {
		const dots = realpathSync(mkdtempSync(join(tmpdir(), "a2a-relink-")));
		dirs.push(dots);
		for (const d of ["a", "b"]) mkdirSync(join(dots, d));
		const { url, owner, port } = await boot();
		writeFileSync(join(dots, "a", "a2a-bridge.json"), configText(port, owner), { mode: 0o600 });
		symlinkSync(join(dots, "a"), join(dots, "agent"));
		const h = await Host.start({ config: null, env: { A2A_BRIDGE_CONFIG: join(dots, "agent", "a2a-bridge.json") } });
		hosts.push(h);
		expect(await until(() => canConnect(port), 60_000)).toBe(true);
		expect(await status(url, owner)).toBe(200);
		const first = secret();
		writeFileSync(
			join(dots, "a", "a2a-bridge.json"),
			configText(port, owner, { tokens: [{ name: "first", token: first }] }),
		);
		expect(await until(async () => (await status(url, first)) === 200, APPLY_MS)).toBe(true);
		const moved = secret();
		writeFileSync(
			join(dots, "b", "a2a-bridge.json"),
			configText(port, owner, { tokens: [{ name: "moved", token: moved }] }),
			{
				mode: 0o600,
			},
		);
		repoint(join(dots, "agent"), join(dots, "b"));
		// Nudge: an edit of the file the name now reaches (as npm run token would make) should apply it at the latest.
		const later = secret();
		await Bun.sleep(300);
		writeFileSync(
			join(dots, "b", "a2a-bridge.json"),
			configText(port, owner, {
				tokens: [
					{ name: "moved", token: moved },
					{ name: "later", token: later },
				],
			}),
			{ mode: 0o600 },
		);
		const laterLive = await until(async () => (await status(url, later)) === 200, APPLY_MS);
		expect({ laterLive }).toEqual({ laterLive: true });
	}, 120_000);
});
