/**
 * Issue 30 (contract §19) for the bridge's own files, against the real host: hand edits of the config apply
 * exactly as written, each field as its row's `edit` says (issue 41); revocation acts on the running host
 * first whatever the disk does (a directory planted at the config's lock, a full disk); `npm run token`
 * writes whole or not at all and says so; audit records survive a full disk whole or not at all, and planted
 * audit generations stop rotation, not records. Each claim is checked through a second channel: the raw
 * HTTP status a secret gets, the audit file, the config's bytes on disk, host stderr.
 */
import { describe, expect, test } from "bun:test";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_MAX_BYTES } from "../../../src/audit/log.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { freePort, type Host, openSession, ROOT, rpcPost, useSharedHost, withHost } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";
import { mountTmpfs } from "../../helpers/tmpfs.ts";
import { waitFor } from "../../helpers/wait.ts";

const A = `a-${"1".repeat(40)}`;
const B = `b-${"2".repeat(40)}`;

let host: Host;
useSharedHost(
	{
		config: {
			tokens: [
				{ name: "alpha", token: A },
				{ name: "beta", token: B },
			],
		},
	},
	h => ({ host } = h),
);

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** A fresh initialize with `secret`: 200 when it is live, 401 when not. */
async function initStatus(secret: string, on: Host = host): Promise<number> {
	const res = await rpcPost(
		on,
		{
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "edit-test", version: "0" } },
		},
		auth(secret),
	);
	await res.text();
	return res.status;
}

const ping = async (secret: string, sid: string) =>
	(await rpcPost(host, { jsonrpc: "2.0", id: 9, method: "ping" }, { ...auth(secret), "mcp-session-id": sid })).status;

/** Runs `echo marker` under `secret` and returns the token name its audit records carry. */
async function auditedAs(secret: string): Promise<unknown> {
	const sid = await openSession(host, "2025-11-25", { secret, client: "edit-test" });
	const marker = `edit-${crypto.randomUUID()}`;
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command: `echo ${marker}` } } },
		{ ...auth(secret), "mcp-session-id": sid },
	);
	expect(res.status).toBe(200);
	expect(JSON.stringify(await res.json())).toContain(marker);
	const records = await waitFor("the call's done record", () => {
		const r = auditRecords(host, marker);
		return r.some(x => x.phase === "done") ? r : undefined;
	});
	const names = [...new Set(records.map(r => r.token))];
	expect(names.length).toBe(1);
	return names[0];
}

/** Writes the config's token table by hand (as an editor would) and waits until the host says it applied it. */
async function handEdit(tokens: Array<{ name: string; token: string }>): Promise<void> {
	const before = host.notifications().length;
	const raw = JSON.parse(readFileSync(host.configPath, "utf8"));
	writeFileSync(host.configPath, JSON.stringify({ ...raw, tokens }, null, "\t"));
	await waitFor(
		"the edit applied",
		() =>
			host
				.notifications()
				.slice(before)
				.find(m => m.includes("config edit applied")),
		{
			timeoutMs: 10_000,
			seen: () => host.notifications().slice(before),
		},
	);
}

describe("issue 30 item 5: config edits apply as written (defect 7)", () => {
	test("a secret moved to another name, then the file restored -> each time exactly the file's table is live", async () => {
		const alphaSid = await openSession(host, "2025-11-25", { secret: A, client: "edit-test" });
		expect(await auditedAs(A)).toBe("alpha");

		// alpha's secret moves to beta; alpha and beta's old secret leave the table.
		await handEdit([{ name: "beta", token: A }]);
		expect(await initStatus(A)).toBe(200);
		expect(await initStatus(B)).toBe(401);
		expect(await ping(A, alphaSid)).not.toBe(200);
		expect(await auditedAs(A)).toBe("beta");

		// The file restored: both names back with their own secrets.
		await handEdit([
			{ name: "alpha", token: A },
			{ name: "beta", token: B },
		]);
		expect(await initStatus(A)).toBe(200);
		expect(await initStatus(B)).toBe(200);
		expect(await auditedAs(A)).toBe("alpha");
		expect(await auditedAs(B)).toBe("beta");

		// Two names swap their secrets.
		await handEdit([
			{ name: "alpha", token: B },
			{ name: "beta", token: A },
		]);
		expect(await auditedAs(A)).toBe("beta");
		expect(await auditedAs(B)).toBe("alpha");
		await handEdit([
			{ name: "alpha", token: A },
			{ name: "beta", token: B },
		]);
		expect(await auditedAs(A)).toBe("alpha");
	}, 90_000);
});

describe("issue 41 item 1: each row's edit decides what a hand edit does (real host)", () => {
	test("one edit: tokens (live) -> applied and said, the new secret 200; blob (next start) -> said by name, /blob still writes; $schema (never) -> unsaid", async () => {
		const G = `g-${"3".repeat(40)}`;
		const raw = JSON.parse(readFileSync(host.configPath, "utf8"));
		expect(await initStatus(G)).toBe(401);
		const before = host.notifications().length;
		const applied = (m: string) => m.includes("config edit applied");
		const waits = (m: string) => m.includes("applies at the next start");
		const edited = {
			...raw,
			$schema: "./elsewhere.json",
			blob: "read",
			tokens: [...raw.tokens, { name: "gamma", token: G }],
		};
		writeFileSync(host.configPath, JSON.stringify(edited, null, "\t"));
		const said = await waitFor(
			"both notices",
			() => {
				const n = host.notifications().slice(before);
				return n.some(applied) && n.some(waits) ? n : undefined;
			},
			{ timeoutMs: 10_000, seen: () => host.notifications().slice(before) },
		);
		expect(said.filter(applied)).toEqual(["A2A bridge: config edit applied: token 'gamma' added"]);
		expect(said.filter(waits)).toEqual([`A2A bridge: 'blob' changed in ${host.configPath}; applies at the next start`]);
		expect(said.join("\n")).not.toContain("$schema");
		// Second channels: the raw status the new secret gets; a PUT that only "write" serves, and its file on disk.
		expect(await initStatus(G)).toBe(200);
		const file = join(host.cwd, `live-rows-${crypto.randomUUID()}.txt`);
		const put = await fetch(new URL(`/blob?path=${encodeURIComponent(file)}`, host.url), {
			method: "PUT",
			headers: auth(host.token),
			body: "still write",
			signal: AbortSignal.timeout(30_000),
		});
		expect(put.status).toBe(200);
		expect(readFileSync(file, "utf8")).toBe("still write");
		rmSync(file);
		// The file as it was: gamma revoked (401 again), blob's return said once more.
		const back = host.notifications().length;
		writeFileSync(host.configPath, JSON.stringify(raw, null, "\t"));
		await waitFor(
			"gamma revoked",
			() =>
				host
					.notifications()
					.slice(back)
					.find(m => m.includes("'gamma' revoked")),
			{
				timeoutMs: 10_000,
				seen: () => host.notifications().slice(back),
			},
		);
		expect(await initStatus(G)).toBe(401);
	}, 60_000);
});

const CI = `ci-${"c".repeat(40)}`;
const PATH_ENV = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

/** `npm run --silent token -- …` as the README gives it, for a host's HOME (and optionally another config). */
const token = (home: string, args: string[], env: Record<string, string> = {}) =>
	runCommand(["npm", "run", "--silent", "token", "--", ...args], {
		cwd: ROOT,
		env: { HOME: home, PATH: PATH_ENV, ...env },
		timeoutMs: 30_000,
	});

/** `/a2a <text>` and every notification it produced. */
async function a2a(h: Host, text: string): Promise<string[]> {
	const before = h.notifications().length;
	await h.command(text);
	await h.barrier();
	return h.notifications().slice(before);
}

const fileTokens = (path: string): Array<{ name: string; token: string }> =>
	JSON.parse(readFileSync(path, "utf8")).tokens ?? [];

/** A directory with a file in it at `<config>.lock`, as one `POST /blob` to `<config>.lock/x` used to make. */
function plantLockDir(configPath: string): string {
	const lock = `${configPath}.lock`;
	mkdirSync(lock);
	writeFileSync(join(lock, "x"), "planted");
	return lock;
}

describe("issue 30 defect 2: a planted lock path never keeps a revoked token working", () => {
	test("/a2a token revoke and /a2a rotate with a directory at <config>.lock -> 401 at once, the file holds the change, the answer names the lock", async () => {
		await withHost({ config: { tokens: [{ name: "ci", token: CI }] } }, async h => {
			const lock = plantLockDir(h.configPath);
			expect(await initStatus(CI, h)).toBe(200);
			const said = await a2a(h, "/a2a token revoke ci");
			// No polling: the answer came after the host refused the secret.
			expect(await initStatus(CI, h)).toBe(401);
			expect(fileTokens(h.configPath)).toEqual([]);
			expect(said.join("\n")).toContain(`${lock} is a directory the bridge did not make (remove it)`);
			expect(said.join("\n")).toContain(`token 'ci' revoked; its sessions and calls in flight ended`);
			expect(said.join("\n")).toContain(`${h.configPath} holds the change`);

			await a2a(h, "/a2a rotate");
			expect(await initStatus(h.token, h)).toBe(401);
			const owner = JSON.parse(readFileSync(h.configPath, "utf8")).token as string;
			expect(owner).not.toBe(h.token);
			expect(await initStatus(owner, h)).toBe(200);
			expect(readFileSync(join(lock, "x"), "utf8")).toBe("planted");
		});
	}, 90_000);

	test("npm run token -- revoke|rotate with a directory at <config>.lock -> exit 0, the running host refuses the old secret, stderr names the lock", async () => {
		const BOT = `bot-${"b".repeat(40)}`;
		await withHost(
			{
				config: {
					tokens: [
						{ name: "ci", token: CI },
						{ name: "bot", token: BOT },
					],
				},
			},
			async h => {
				const lock = plantLockDir(h.configPath);
				const t0 = Date.now();
				const revoked = await token(h.home, ["revoke", "ci"]);
				expect(revoked.code, revoked.err).toBe(0);
				expect(Date.now() - t0).toBeLessThan(20_000); // not the lock's 30 s wait; a loaded machine spawns bun slowly
				expect(revoked.err).toContain(`${lock} is a directory the bridge did not make (remove it)`);
				expect(revoked.out).toContain(`token 'ci' revoked in ${h.configPath}`);
				expect(fileTokens(h.configPath).map(t => t.name)).toEqual(["bot"]);
				await waitFor("the host refuses ci", async () => (await initStatus(CI, h)) === 401, { timeoutMs: 5000 });

				const rotated = await token(h.home, ["rotate", "bot"]);
				expect(rotated.code, rotated.err).toBe(0);
				const next = rotated.out.trim().split("\n").at(-1) ?? "";
				expect(fileTokens(h.configPath)).toEqual([{ name: "bot", token: next }]);
				await waitFor("the host refuses bot's old secret", async () => (await initStatus(BOT, h)) === 401, {
					timeoutMs: 5000,
				});
				expect(await initStatus(next, h)).toBe(200);
			},
		);
	}, 90_000);
});

describe("issue 30 defects 2 and 5: a full disk (the config on a 64 KiB tmpfs)", () => {
	test("/a2a revoke acts live and says the file was not written; add shows no secret; npm run token says not written, prints no secret, and tells the truth about the host", async () => {
		const disk = mountTmpfs(64);
		try {
			const path = join(disk.dir, "a2a-bridge.json");
			const port = await freePort();
			const owner = `owner-${"o".repeat(40)}`;
			const BOT = `bot-${"b".repeat(40)}`;
			const config = {
				port,
				token: owner,
				host: "127.0.0.1",
				tokens: [
					{ name: "ci", token: CI },
					{ name: "bot", token: BOT },
				],
			};
			writeFileSync(path, JSON.stringify(config, null, "\t"), { mode: 0o600 });
			const env = { A2A_BRIDGE_CONFIG: path };
			await withHost({ config: { port, token: owner }, env }, async h => {
				const before = readFileSync(path);
				// The host lists itself right after its port opens: the disk is filled only once it has.
				await waitFor("the host's runtime entry", () => existsSync(join(disk.dir, "a2a-bridge.runtime.json")), {
					timeoutMs: 10_000,
				});
				disk.fill();

				const revoke = (await a2a(h, "/a2a token revoke ci")).join("\n");
				expect(await initStatus(CI, h)).toBe(401);
				// The lock is the first thing that needs a page: it says so, and that nothing was written.
				expect(revoke).toContain(`the file was not changed: ${path}.lock not written (ENOSPC); nothing was written`);
				expect(revoke).toContain(
					`token 'ci' revoked; its sessions and calls in flight ended, other tokens untouched in this host only: ${path} still holds the old secret`,
				);
				expect(readFileSync(path).equals(before)).toBe(true);

				const add = (await a2a(h, "/a2a token add laptop")).join("\n");
				expect(add).toContain(`token not added: ${path}.lock not written (ENOSPC); nothing was written`);
				expect(add).not.toContain("Shown once");

				// The script: no secret for a token it could not save, non-zero exit, nothing left behind.
				const added = await token(h.home, ["add", "laptop"], env);
				expect(added.code).toBe(1);
				expect(added.out).toBe("");
				expect(added.err).toContain(`${path}.lock not written (ENOSPC); nothing was written`);
				const rotated = await token(h.home, ["rotate", "bot"], env);
				expect(rotated.code).toBe(1);
				expect(rotated.out).toBe("");
				expect(rotated.err).toContain("token 'bot' is unchanged and the running host still accept its secret");
				// ...which is true: bot's secret still works.
				expect(await initStatus(BOT, h)).toBe(200);
				expect(readFileSync(path).equals(before)).toBe(true);
				expect(readdirSync(disk.dir).filter(n => n.endsWith(".lock") || n.endsWith(".tmp"))).toEqual([]);

				// Space back: the file, re-read as it is (still holding ci), does not bring ci back.
				disk.free();
				const seen = h.notifications().length;
				writeFileSync(path, before);
				const reread = await waitFor(
					"the re-read",
					() =>
						h
							.notifications()
							.slice(seen)
							.find(m => m.includes("config edit")),
					{ timeoutMs: 10_000 },
				);
				expect(await initStatus(CI, h)).toBe(401);
				expect(reread).toContain("token 'ci' in the file holds a secret this host revoked");
				// And the next write goes through at once: no lock was left behind.
				const t0 = Date.now();
				const ok = await token(h.home, ["add", "laptop"], env);
				expect(ok.code, ok.err).toBe(0);
				expect(Date.now() - t0).toBeLessThan(20_000); // not the lock's 30 s wait; a loaded machine spawns bun slowly
			});
		} finally {
			disk.unmount();
		}
	}, 120_000);
});

describe("issue 30 defect 5: npm run token on a nearly full disk (process level)", () => {
	test("add with room for the lock and 4 KiB of a 6 KiB config -> exit 1, no secret, the config byte-identical", async () => {
		const disk = mountTmpfs(64);
		try {
			const path = join(disk.dir, "a2a-bridge.json");
			const tokens = Array.from({ length: 80 }, (_, i) => ({ name: `t${i}`, token: `t${i}-${"k".repeat(40)}` }));
			writeFileSync(path, JSON.stringify({ port: 4000, token: `owner-${"o".repeat(40)}`, tokens }, null, "\t"), {
				mode: 0o600,
			});
			const before = readFileSync(path);
			disk.fill();
			disk.free(2);
			// HOME elsewhere: npm's own files must not take the pages under test.
			const home = mkdtempSync(join(tmpdir(), "a2a-token-home-"));
			const added = await token(home, ["add", "laptop"], { A2A_BRIDGE_CONFIG: path });
			rmSync(home, { recursive: true, force: true });
			expect(added.code).toBe(1);
			expect(added.out).toBe("");
			expect(added.err).toBe(`token: ${path} not written (ENOSPC); the file is unchanged\n`);
			expect(readFileSync(path).equals(before)).toBe(true);
			expect(readdirSync(disk.dir).sort()).toEqual([".filler", "a2a-bridge.json"]);
		} finally {
			disk.unmount();
		}
	}, 60_000);
});

describe("issue 30 defect 8 and generations: the audit file (real host)", () => {
	const bash = async (h: Host, sid: string, command: string) => {
		const res = await rpcPost(
			h,
			{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command } } },
			{ "mcp-session-id": sid },
		);
		expect(res.status).toBe(200);
		return JSON.stringify(await res.json());
	};
	/** Every line of the file parses, and each one is a whole record. */
	const lines = (path: string) =>
		readFileSync(path, "utf8")
			.split("\n")
			.slice(0, -1)
			.map(l => JSON.parse(l) as Record<string, unknown>);

	test("a full disk mid-record -> no half record; the call still runs; the first record after space returns is whole on its own line", async () => {
		const disk = mountTmpfs(64);
		try {
			const audit = join(disk.dir, "a2a-bridge.log");
			await withHost({ env: { A2A_BRIDGE_AUDIT: audit } }, async h => {
				const sid = await openSession(h);
				// Small calls until the file's last page has less room than the next record needs (but some).
				for (let i = 0; ; i++) {
					await bash(h, sid, `echo pad-${i}`);
					const room = 4096 - (statSync(audit).size % 4096);
					if (room < 900 && room > 0) break;
				}
				const before = readFileSync(audit);
				disk.fill();
				const marker = `cut-${crypto.randomUUID()}`;
				// Eight 119-character values (kept, not hashed): args cut at 1 KiB, a record of about 1.3 KiB.
				const fill = Object.fromEntries("abcdefgh".split("").map(k => [k, k.repeat(119)]));
				const args = { command: `echo ${marker}`, ...fill };
				const res = await rpcPost(
					h,
					{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: args } },
					{ "mcp-session-id": sid },
				);
				expect(JSON.stringify(await res.json())).toContain(marker);
				expect(readFileSync(audit).equals(before)).toBe(true);
				await waitFor("stderr reports the failure", () =>
					h.stderr.includes(`audit record not written to ${audit} (ENOSPC)`),
				);
				disk.free();
				const after = `after-${crypto.randomUUID()}`;
				await bash(h, sid, `echo ${after}`);
				const records = lines(audit);
				expect(records.filter(r => String(r.args).includes(marker))).toEqual([]);
				expect(records.filter(r => String(r.args).includes(after)).map(r => r.phase)).toEqual(["start", "done"]);
			});
		} finally {
			disk.unmount();
		}
	}, 120_000);

	test("directories planted at .1, .2 and .3 with the log past its size limit -> every record still lands, stderr says once why it did not rotate", async () => {
		await withHost({}, async h => {
			const gens = [".1", ".2", ".3"].map(g => `${h.auditPath}${g}`);
			for (const g of gens) {
				mkdirSync(g);
				writeFileSync(join(g, "x"), "planted");
			}
			// History just over the rotation size, as a busy week leaves it.
			const old = `${JSON.stringify({ ts: "2026-01-01T00:00:00.000Z", id: "old", phase: "done", tool: "read", args: "{}" })}\n`;
			writeFileSync(h.auditPath, old.repeat(Math.ceil(AUDIT_MAX_BYTES / old.length)), { mode: 0o600 });
			const sid = await openSession(h);
			const markers = Array.from({ length: 3 }, () => `gen-${crypto.randomUUID()}`);
			for (const m of markers) await bash(h, sid, `echo ${m}`);
			for (const m of markers) expect(auditRecords(h, m).map(r => r.phase)).toEqual(["start", "done"]);
			expect(h.stderr).not.toContain("audit record not written");
			const told = h.stderr.split("\n").filter(l => l.includes("not rotated"));
			expect(told).toEqual([
				`a2a-bridge: audit log ${h.auditPath} not rotated: ${gens[0]} is not a regular file the bridge made (remove it); records go on in it past the limit`,
			]);
			for (const g of gens) expect(readFileSync(join(g, "x"), "utf8")).toBe("planted");
			expect(existsSync(`${h.auditPath}.4`)).toBe(false);
		});
	}, 90_000);
});
