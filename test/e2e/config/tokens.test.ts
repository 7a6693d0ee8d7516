/**
 * Named tokens against the real host (contract §14): each token is an identity with the host's full
 * reach; audit and `/a2a` name it; sessions are bound to it; add, revoke and rotate act live and
 * touch no other token — a revoke ends that token's calls in flight at once.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { auditRecords } from "../../helpers/audit.ts";
import { defaultEntryName, type Host, rpcPost, useSharedHost, withHost } from "../../helpers/host.ts";
import { envelope, modernPost } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

const CI = `ci-${"c".repeat(40)}`;
const BOT = `bot-${"b".repeat(40)}`;

let host: Host;
useSharedHost(
	{
		config: {
			tokens: [
				{ name: "ci", token: CI },
				{ name: "bot", token: BOT },
			],
		},
	},
	h => ({ host } = h),
);

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function open(token: string, client = "tokens-test"): Promise<string> {
	const res = await rpcPost(
		host,
		{
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: client, version: "1" } },
		},
		auth(token),
	);
	const sid = res.headers.get("mcp-session-id");
	await res.text();
	if (res.status !== 200 || !sid) throw new Error(`initialize with token failed: ${res.status}`);
	return sid;
}

async function call(token: string, sid: string, name: string, args: Record<string, unknown>, id: number | string = 1) {
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
		{ ...auth(token), "mcp-session-id": sid },
	);
	return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const ping = async (token: string, sid: string) =>
	(await rpcPost(host, { jsonrpc: "2.0", id: 9, method: "ping" }, { ...auth(token), "mcp-session-id": sid })).status;

/** The latest notification after `before` that passes `pred`, waiting for it with a bound. */
function notice(before: number, pred: (m: string) => boolean): Promise<string> {
	return waitFor("a matching notification", () => host.notifications().slice(before).find(pred), {
		timeoutMs: 10_000,
		seen: () => host.notifications().slice(before),
	});
}

async function a2a(text: string, pred: (m: string) => boolean = () => true): Promise<string> {
	const before = host.notifications().length;
	await host.command(text);
	return notice(before, pred);
}

describe("named tokens (real host)", () => {
	test("each token works; audit records name the token and the client", async () => {
		const marker = `tok-${crypto.randomUUID()}`;
		for (const [token, name] of [
			[host.token, "owner"],
			[CI, "ci"],
			[BOT, "bot"],
		] as const) {
			const sid = await open(token, `client-${name}`);
			const r = await call(token, sid, "bash", { command: `echo ${marker}-${name}` });
			expect((r.body.result as { isError: boolean }).isError).toBe(false);
			const mine = auditRecords(host).filter(x => String(x.args).includes(`${marker}-${name}`));
			expect(mine.map(x => x.phase)).toEqual(["start", "done"]);
			for (const rec of mine) {
				expect(rec.token).toBe(name);
				expect(rec.client).toBe(`client-${name}`);
			}
		}
		// No record ever carries a secret.
		const text = readFileSync(host.auditPath, "utf8");
		for (const secret of [host.token, CI, BOT]) expect(text).not.toContain(secret);
	}, 60_000);

	test("a session answers only to the token that opened it (another token -> 404)", async () => {
		const sid = await open(CI);
		expect(await ping(CI, sid)).toBe(200);
		expect(await ping(BOT, sid)).toBe(404);
		expect(await ping(host.token, sid)).toBe(404);
		expect(await ping(CI, sid)).toBe(200);
	}, 30_000);

	test("/a2a lists sessions per token with their clients; /a2a tokens never shows a secret", async () => {
		await open(BOT, "per-token-client");
		const status = await a2a("/a2a", m => m.startsWith("A2A bridge:"));
		expect(status).toContain("sessions per token:");
		expect(status).toMatch(/\n {2}bot bot-bb…: \d+ session\(s\) \(clients: [^)]*per-token-client/);
		expect(status).toContain("approvals: yolo");
		const list = await a2a("/a2a tokens", m => m.startsWith("A2A bridge tokens"));
		expect(list).toContain("owner");
		expect(list).toContain("ci");
		for (const secret of [host.token, CI, BOT]) expect(list).not.toContain(secret);
	}, 30_000);

	test("/a2a mcp-json ci -> an entry carrying ci's token", async () => {
		const text = await a2a("/a2a mcp-json ci", m => m.includes("mcpServers"));
		// The entry names the host, not the token: the same key for every token of this host.
		const entry = JSON.parse(text).mcpServers[defaultEntryName(host.port)];
		expect(entry.headers.Authorization).toBe(`Bearer ${CI}`);
	}, 30_000);

	test("token add -> written 0600 first, live at once, shown once; revoke during a running call ends it, others untouched", async () => {
		const added = await a2a("/a2a token add temp", m => m.includes("token 'temp'"));
		const secret = added.split("\n")[1] ?? "";
		expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
		const onDisk = JSON.parse(readFileSync(host.configPath, "utf8"));
		expect(onDisk.tokens).toContainEqual({ name: "temp", token: secret });
		expect(statSync(host.configPath).mode & 0o777).toBe(0o600);

		const tempSid = await open(secret);
		const ciSid = await open(CI);
		const markerTemp = `rev-${crypto.randomUUID()}`;
		const markerCi = `keep-${crypto.randomUUID()}`;
		const tempCall = call(secret, tempSid, "bash", { command: `sleep 20; echo ${markerTemp}` });
		const ciCall = call(CI, ciSid, "bash", { command: `sleep 2; echo ${markerCi}` });
		// Both calls are running once their start records are on disk.
		const startOf = (marker: string) =>
			auditRecords(host).some(x => x.phase === "start" && String(x.args).includes(marker));
		await waitFor("both calls' start records", () => startOf(markerTemp) && startOf(markerCi), { timeoutMs: 15_000 });
		const revoked = await a2a("/a2a token revoke temp", m => m.includes("revoked") || m.includes("not revoked"));
		expect(revoked).toContain("token 'temp' revoked");
		const r = await tempCall;
		expect((r.body.error as { code: number }).code).toBe(-32800);
		const done = auditRecords(host).find(x => x.phase === "done" && String(x.args).includes(markerTemp));
		expect(done).toMatchObject({ token: "temp", cancelled: true, isError: true });
		expect(await ping(secret, tempSid)).toBe(401);
		// The other token's call ran to its end and its session lives on.
		const kept = await ciCall;
		expect((kept.body.result as { content: Array<{ text: string }> }).content[0]?.text).toContain(markerCi);
		expect(await ping(CI, ciSid)).toBe(200);
		expect(JSON.parse(readFileSync(host.configPath, "utf8")).tokens.map((t: { name: string }) => t.name)).toEqual([
			"ci",
			"bot",
		]);
	}, 60_000);

	test("rotate bot -> bot's old secret and its sessions refused, new one works, owner and ci untouched", async () => {
		const botSid = await open(BOT);
		const ciSid = await open(CI);
		const ownerSid = await open(host.token);
		await a2a("/a2a rotate bot", m => m.includes("new secret for 'bot'"));
		const fresh = JSON.parse(readFileSync(host.configPath, "utf8")).tokens.find(
			(t: { name: string }) => t.name === "bot",
		).token as string;
		expect(fresh).not.toBe(BOT);
		expect(await ping(BOT, botSid)).toBe(401);
		expect(await ping(fresh, botSid)).toBe(404);
		expect(await ping(fresh, await open(fresh))).toBe(200);
		expect(await ping(CI, ciSid)).toBe(200);
		expect(await ping(host.token, ownerSid)).toBe(200);
	}, 30_000);

	test("hostile names: add owner, add a bad name, revoke owner, revoke unknown -> refused, nothing changes", async () => {
		const before = readFileSync(host.configPath, "utf8");
		for (const [cmd, expected] of [
			["/a2a token add owner", "token not added"],
			["/a2a token add Bad/Name", "token not added"],
			["/a2a token add ci", "exists already"],
			["/a2a token revoke owner", "cannot be revoked"],
			["/a2a token revoke nobody", "no token named 'nobody'"],
			["/a2a rotate nobody", "no live token named 'nobody'"],
			["/a2a token add a b", "use /a2a"],
		] as const) {
			const text = await a2a(cmd, m => m.startsWith("A2A bridge"));
			expect(text).toContain(expected);
		}
		expect(readFileSync(host.configPath, "utf8")).toBe(before);
	}, 60_000);
});

describe("named tokens in the 2026-07-28 era (no session)", () => {
	test("a modern call with a named token is audited under its name; revoking it cancels the call at once", async () => {
		await a2a("/a2a token add modern", m => m.includes("token 'modern'"));
		const secret = JSON.parse(readFileSync(host.configPath, "utf8")).tokens.find(
			(t: { name: string }) => t.name === "modern",
		).token as string;
		const marker = `modern-${crypto.randomUUID()}`;
		const pending = modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command: `sleep 20; echo ${marker}` } },
			{ meta: envelope("modern-client"), headers: { authorization: `Bearer ${secret}` } },
		);
		const start = await waitFor("the start record", () => auditRecords(host, marker)[0], { timeoutMs: 15_000 });
		expect(start).toMatchObject({ sid: null, token: "modern", client: "modern-client", phase: "start" });
		await a2a("/a2a token revoke modern", m => m.includes("revoked"));
		const body = (await (await pending).json()) as { error?: { code: number } };
		expect(body.error?.code).toBe(-32800);
		const done = await waitFor("the done record", () => auditRecords(host, marker).find(r => r.phase === "done"), {
			timeoutMs: 5000,
		});
		expect(done).toMatchObject({ token: "modern", cancelled: true });
	}, 60_000);
});

describe("named tokens: fail-closed config (real host)", () => {
	const cases: Array<[string, unknown, string]> = [
		["a scope field", [{ name: "ci", token: CI, scope: "read" }], "tokens[0].scope"],
		["a bad name", [{ name: "CI!", token: CI }], "tokens[0].name"],
		["the owner's name", [{ name: "owner", token: CI }], "tokens[0].name"],
		["a short token", [{ name: "ci", token: "short" }], "tokens[0].token"],
		[
			"a repeated secret",
			[
				{ name: "a", token: CI },
				{ name: "b", token: CI },
			],
			"tokens[1].token",
		],
		["not an array", { ci: CI }, "field 'tokens'"],
	];
	for (const [what, tokens, field] of cases) {
		test(`${what} -> the bridge does not start, omp runs on, the message names ${field}`, async () => {
			await withHost({ config: { tokens }, waitForPort: false }, async h => {
				const f = await h.waitFrame(
					x => x.type === "extension_ui_request" && String(x.message).startsWith("A2A bridge not started"),
					30_000,
				);
				expect(String(f.message)).toContain(field);
				expect(String(f.message)).toContain(h.configPath);
				expect(h.proc.exitCode).toBe(null);
			});
		}, 60_000);
	}
});
