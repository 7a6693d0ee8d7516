/**
 * Contract §18 against the real host: the first start's port is written back and bound again on the next
 * start, a user's `port: 0` stays random and every printed entry says so; `npm run token` edits the config
 * and a running host applies it live (revoked sessions end); the runtime record lists every host on one
 * config, each stop removes only its own entry, and `npm run probe` picks by directory or lists them.
 * Results are checked on disk (config, record) and over HTTP, not only in the command's words.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
	existsSync,
	lstatSync,
	mkdtempSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canConnect, Host, ROOT } from "../../helpers/host.ts";
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

async function boot(opts: Parameters<typeof Host.start>[0] = {}): Promise<Host> {
	const h = await Host.start(opts);
	hosts.push(h);
	return h;
}

/** Polls an async condition with a bound; throws naming it when the bound passes. */
async function until(what: string, pred: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await pred())) {
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
		await Bun.sleep(50);
	}
}

const startNotice = (h: Host): Promise<string> =>
	h
		.waitFrame(f => f.method === "notify" && String(f.message).startsWith("A2A bridge listening on"), 60_000)
		.then(f => String(f.message));
const portOf = (msg: string): number => Number(/:(\d+)\//.exec(msg)?.[1]);
const PATH_ENV = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

/** `npm run --silent token -- …` as the README gives it, for the host's HOME (or another config). */
function token(home: string, args: string[], env: Record<string, string> = {}) {
	return runCommand(["npm", "run", "--silent", "token", "--", ...args], {
		cwd: ROOT,
		env: { HOME: home, PATH: PATH_ENV, ...env },
		timeoutMs: 30_000,
	});
}

async function status(url: string, secret: string, sid?: string): Promise<number> {
	const res = await fetch(url, {
		method: "POST",
		headers: {
			authorization: `Bearer ${secret}`,
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			...(sid ? { "mcp-session-id": sid } : {}),
		},
		body: JSON.stringify(
			sid
				? { jsonrpc: "2.0", id: 2, method: "tools/list" }
				: {
						jsonrpc: "2.0",
						id: 1,
						method: "initialize",
						params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
					},
		),
	});
	await res.text();
	return res.status;
}

async function mcpJson(h: Host, name = ""): Promise<string> {
	const before = h.notifications().length;
	await h.command(`/a2a mcp-json ${name}`.trim());
	return (
		h
			.notifications()
			.slice(before)
			.find(m => m.includes("mcpServers")) ?? ""
	);
}

describe("an endpoint that stays put", () => {
	test("no port in the config -> the bound one is written back; the next start binds it again; mcp-json has no note", async () => {
		const first = await boot({ config: null });
		const port = portOf(await startNotice(first));
		await until("port written to the config", () => JSON.parse(readFileSync(first.configPath, "utf8")).port === port);
		expect(statSync(first.configPath).mode & 0o777).toBe(0o600);
		const text = readFileSync(first.configPath, "utf8");
		expect(await mcpJson(first)).not.toContain("Note:");
		await first.stop();
		expect(await canConnect(port)).toBe(false);
		// The same file, started again (a fresh HOME holding it): the URL a client pasted still answers.
		const second = await boot({ config: text, waitForPort: false });
		expect(portOf(await startNotice(second))).toBe(port);
		await second.waitForPort(port);
		expect(readFileSync(second.configPath, "utf8")).toBe(text);
	}, 90_000);

	test("port 0 written by the user -> never replaced, and the start notice, /a2a and mcp-json say it is random", async () => {
		const h = await boot({ config: { port: 0 }, waitForPort: false });
		const notice = await startNotice(h);
		expect(notice.split("\n")[0]).toEndWith(
			'; port 0 in the config: a new port at every start (set "port" to keep this URL)',
		);
		await h.waitForPort(portOf(notice));
		const entry = await mcpJson(h);
		expect(entry).toContain(`"url": "http://127.0.0.1:${portOf(notice)}/"`);
		expect(entry.split("\n").at(-1)).toBe(
			'Note: port 0 in the config: a new port at every start (set "port" to keep this URL)',
		);
		await h.command("/a2a");
		expect(h.notifications().at(-1)?.split("\n")[0]).toContain("port 0 in the config");
		expect(JSON.parse(readFileSync(h.configPath, "utf8")).port).toBe(0);
	}, 60_000);
});

describe("npm run token against a running host", () => {
	test("add -> secret printed once, live within a second; list shows no secret; revoke -> its session ends; rotate owner -> old refused", async () => {
		const h = await boot({ config: { blob: "read" } });
		const added = await token(h.home, ["add", "laptop"]);
		expect(added.code, added.err).toBe(0);
		const secret = added.out.trim().split("\n").at(-1) ?? "";
		expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(added.out.split(secret).length).toBe(2);
		expect(added.out).toContain(`the running host (pid ${h.proc.pid} at ${h.url}) apply it within a second`);
		expect(JSON.parse(readFileSync(h.configPath, "utf8")).tokens).toEqual([{ name: "laptop", token: secret }]);
		expect(statSync(h.configPath).mode & 0o777).toBe(0o600);
		await until("the new token is live", async () => (await status(h.url, secret)) === 200);
		expect(h.notifications()).toContain("A2A bridge: config edit applied: token 'laptop' added");

		const listed = await token(h.home, ["list"]);
		expect(listed.code).toBe(0);
		expect(listed.out).toContain(`  owner ${h.token.slice(0, 6)}…`);
		expect(listed.out).toContain(`  laptop ${secret.slice(0, 6)}…`);
		for (const s of [h.token, secret]) expect(listed.out + listed.err).not.toContain(s);

		const sid = await openSessionWith(h.url, secret);
		expect(await status(h.url, secret, sid)).toBe(200);
		const revoked = await token(h.home, ["revoke", "laptop"]);
		expect(revoked.code, revoked.err).toBe(0);
		await until("the revoked token is refused", async () => (await status(h.url, secret)) === 401);
		expect(await status(h.url, secret, sid)).toBe(401);

		const rotated = await token(h.home, ["rotate"]);
		expect(rotated.code, rotated.err).toBe(0);
		const owner = rotated.out.trim().split("\n").at(-1) ?? "";
		await until("the old owner token is refused", async () => (await status(h.url, h.token)) === 401);
		expect(await status(h.url, owner)).toBe(200);
	}, 90_000);

	test("hostile: bad names, a config that fails validation -> refused, files unchanged, host unchanged; a symlinked config -> its file edited", async () => {
		const h = await boot();
		const before = readFileSync(h.configPath, "utf8");
		for (const args of [
			["add", "Bad Name"],
			["add", "owner"],
			["add", "../x"],
			["revoke", "owner"],
			["revoke", "nobody"],
			["frob"],
			["add"],
		]) {
			const r = await token(h.home, args);
			expect(r.code, args.join(" ")).not.toBe(0);
			expect(r.err.trim().length, args.join(" ")).toBeGreaterThan(0);
			expect(r.out).toBe("");
		}
		expect(readFileSync(h.configPath, "utf8")).toBe(before);

		// A user's edit that fails validation: the host says so and keeps its live tokens.
		const broken = before.replace('"host": "127.0.0.1"', '"host": "127.0.0.1", "blobs": "read"');
		writeFileSync(h.configPath, broken);
		await until("the host reports the refused edit", () =>
			h.notifications().some(m => m.includes("config edit not applied") && m.includes("unknown field 'blobs'")),
		);
		expect(await status(h.url, h.token)).toBe(200);
		const refused = await token(h.home, ["add", "ci"]);
		expect(refused.code).toBe(1);
		expect(refused.err).toContain("unknown field 'blobs' (did you mean 'blob'?)");
		expect(readFileSync(h.configPath, "utf8")).toBe(broken);

		const elsewhere = mkdtempSync(join(tmpdir(), "a2a-token-link-"));
		dirs.push(elsewhere);
		writeFileSync(join(elsewhere, "real.json"), before, { mode: 0o600 });
		symlinkSync(join(elsewhere, "real.json"), join(elsewhere, "link.json"));
		// A config kept as a link is edited in the file it reaches; the link stays a link (issue 38 finding 4).
		const linked = await token(h.home, ["add", "ci"], { A2A_BRIDGE_CONFIG: join(elsewhere, "link.json") });
		expect(linked.code, linked.err).toBe(0);
		expect(linked.err).toContain(
			`is a link; editing the file it reaches, ${join(realpathSync(elsewhere), "real.json")}`,
		);
		expect(lstatSync(join(elsewhere, "link.json")).isSymbolicLink()).toBe(true);
		const ci = JSON.parse(readFileSync(join(elsewhere, "real.json"), "utf8")).tokens;
		expect(ci).toEqual([{ name: "ci", token: linked.out.trim().split("\n").at(-1) }]);
		expect(readFileSync(h.configPath, "utf8")).toBe(broken);
	}, 90_000);

	test("concurrent runs: six adds at once all land, each secret live", async () => {
		const h = await boot();
		const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => token(h.home, ["add", `t${i}`])));
		for (const r of runs) expect(r.code, r.err).toBe(0);
		const names = JSON.parse(readFileSync(h.configPath, "utf8")).tokens.map((t: { name: string }) => t.name);
		expect(names.sort()).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
		const secrets = runs.map(r => r.out.trim().split("\n").at(-1) ?? "");
		for (const s of secrets) await until("each added token is live", async () => (await status(h.url, s)) === 200);
		expect(existsSync(`${h.configPath}.lock`)).toBe(false);
	}, 90_000);
});

async function openSessionWith(url: string, secret: string): Promise<string> {
	const res = await fetch(url, {
		method: "POST",
		headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json" },
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
		}),
	});
	await res.text();
	return res.headers.get("mcp-session-id") ?? "";
}

describe("several hosts on one config", () => {
	test("both listed; probe picks by directory or lists them; /a2a names the other; a stop removes only its own entry", async () => {
		const shared = mkdtempSync(join(tmpdir(), "a2a-shared-"));
		dirs.push(shared);
		const config = join(shared, "a2a-bridge.json");
		const record = join(shared, "a2a-bridge.runtime.json");
		writeFileSync(config, JSON.stringify({ token: "s".repeat(43) }), { mode: 0o600 });
		const env = { A2A_BRIDGE_CONFIG: config };
		// Started one after the other: the first pins the port, the second finds it busy and falls back.
		const a = await boot({ config: null, env, waitForPort: false });
		const portA = portOf(await startNotice(a));
		const b = await boot({ config: null, env, waitForPort: false });
		const portB = portOf(await startNotice(b));
		expect(portB).not.toBe(portA);
		await until(
			"two entries in the record",
			() => existsSync(record) && JSON.parse(readFileSync(record, "utf8")).hosts.length === 2,
		);
		const hostsIn = () =>
			JSON.parse(readFileSync(record, "utf8")).hosts as Array<{ pid: number; cwd: string; port: number }>;
		expect(hostsIn().map(e => [e.pid, e.port, e.cwd])).toEqual([
			[a.proc.pid, portA, a.cwd],
			[b.proc.pid, portB, b.cwd],
		]);

		const probe = (cwd: string) =>
			runCommand(["bun", join(ROOT, "scripts", "probe.ts")], { cwd, env: { HOME: shared, PATH: PATH_ENV, ...env } });
		const inB = await probe(b.cwd);
		expect(inB.out).toContain(`probe: http://127.0.0.1:${portB}/ (from ${record})`);
		expect(inB.code, inB.err).toBe(0);
		const elsewhere = await probe(shared);
		expect(elsewhere.code).toBe(2);
		expect(elsewhere.err).toContain(`2 hosts run and none serves ${shared}; pass one URL`);
		expect(elsewhere.err).toContain(`http://127.0.0.1:${portA}/  pid ${a.proc.pid}, serving ${a.cwd}`);

		await a.command("/a2a");
		expect(a.notifications().at(-1)).toContain(
			`other bridges of this user (1):\n  http://127.0.0.1:${portB}/ pid ${b.proc.pid}, serving ${b.cwd}`,
		);

		await b.stop();
		expect(hostsIn().map(e => e.pid)).toEqual([a.proc.pid]);
		const after = await probe(shared);
		expect(after.out).toContain(`probe: http://127.0.0.1:${portA}/`);
		expect(after.code, after.err).toBe(0);
		await a.stop();
		expect(existsSync(record)).toBe(false);
	}, 120_000);
});
