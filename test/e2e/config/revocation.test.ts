/**
 * Revocation, fairness and audit volume against the real host (contract §16; issue 20 items 3-5,
 * issue 26 item 1). Tokens are added live with `/a2a token add`, so each test has its own; requests
 * whose headers arrive before `/a2a token revoke|rotate` and whose body comes after are sent over a
 * raw socket (`Expect: 100-continue` says the bridge has seen the headers).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { a2aAnswer, addLiveToken } from "../../helpers/a2a-command.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, openSession, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { envelope, MODERN } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

let host: Host;
useSharedHost({}, h => ({ host } = h));

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });

const a2a = (text: string, pred?: (m: string) => boolean) => a2aAnswer(host, text, pred);
const addToken = (name: string) => addLiveToken(host, name);

async function rotate(name: string): Promise<string> {
	await a2a(`/a2a rotate ${name}`);
	const config = JSON.parse(readFileSync(host.configPath, "utf8")) as {
		tokens: Array<{ name: string; token: string }>;
	};
	const entry = config.tokens.find(t => t.name === name);
	if (!entry) throw new Error(`no ${name} in the config`);
	return entry.token;
}

const open = (secret: string, client = "revocation-test") => openSession(host, "2025-11-25", { secret, client });

async function endSession(secret: string, sid: string): Promise<void> {
	const res = await fetch(host.url, { method: "DELETE", headers: { ...auth(secret), "mcp-session-id": sid } });
	await res.text();
}

const ping = async (secret: string, sid: string) =>
	(await rpcPost(host, { jsonrpc: "2.0", id: 9, method: "ping" }, { ...auth(secret), "mcp-session-id": sid })).status;

const audit = () => auditRecords(host);

/** A request whose headers (with `Expect: 100-continue`) go first; the body is sent by `finish`. */
interface SlowRequest {
	/** Resolves once the bridge has the headers (it sent `100 Continue`). */
	seen: Promise<void>;
	finish(body?: string): void;
	/** Everything the server wrote, once it closed or answered. */
	answer: Promise<string>;
	sock: Socket;
}

function slowRequest(path: string, headers: Record<string, string>, length: number): SlowRequest {
	const sock = connect({ host: "127.0.0.1", port: host.port });
	let got = "";
	let seenResolve: () => void = () => {};
	const seen = new Promise<void>(r => {
		seenResolve = r;
	});
	const answer = new Promise<string>(resolve => {
		sock.on("data", d => {
			got += d.toString("utf8");
			if (got.includes("100 Continue")) seenResolve();
			const rest = got.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "");
			const m = /\r\n\r\n/.exec(rest);
			const len = Number(/content-length: (\d+)/i.exec(rest)?.[1] ?? Number.NaN);
			if (m && Number.isFinite(len) && Buffer.byteLength(rest.slice(m.index + 4)) >= len) resolve(rest);
		});
		sock.on("close", () => resolve(got.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "")));
		sock.on("error", () => resolve(got));
	});
	const all = {
		host: `127.0.0.1:${host.port}`,
		"content-type": "application/json",
		accept: "application/json, text/event-stream",
		"content-length": String(length),
		expect: "100-continue",
		...headers,
	};
	sock.on("connect", () => {
		sock.write(
			`POST ${path} HTTP/1.1\r\n${Object.entries(all)
				.map(([k, v]) => `${k}: ${v}`)
				.join("\r\n")}\r\n\r\n`,
		);
	});
	return { seen, answer, sock, finish: (body = "") => sock.write(body) };
}

describe("issue 20 item 3: identity checked again after the body, on every route", () => {
	test("2025 tools/call: headers in, token revoked, body after -> 401, bash never ran, no audit record", async () => {
		const secret = await addToken("slow25");
		const sid = await open(secret);
		const marker = join(host.cwd, `slow25-${crypto.randomUUID()}`);
		const body = JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "tools/call",
			params: { name: "bash", arguments: { command: `touch ${marker}` } },
		});
		const req = slowRequest("/", { ...auth(secret), "mcp-session-id": sid }, Buffer.byteLength(body));
		await req.seen;
		await a2a("/a2a token revoke slow25");
		req.finish(body);
		const answer = await req.answer;
		expect(answer).toMatch(/^HTTP\/1\.1 401/);
		expect(answer.toLowerCase()).toContain('www-authenticate: bearer realm="omp-a2a-bridge", error="invalid_token"');
		expect(existsSync(marker)).toBe(false);
		expect(audit().some(r => JSON.stringify(r).includes(marker))).toBe(false);
	}, 60_000);

	test("2026-07-28 tools/call: headers in, token rotated, body after -> 401 with the old secret, nothing ran", async () => {
		const secret = await addToken("slow26");
		const marker = join(host.cwd, `slow26-${crypto.randomUUID()}`);
		const body = JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "tools/call",
			params: { name: "bash", arguments: { command: `touch ${marker}` }, _meta: envelope() },
		});
		const req = slowRequest(
			"/",
			{ ...auth(secret), "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "bash" },
			Buffer.byteLength(body),
		);
		await req.seen;
		await rotate("slow26");
		req.finish(body);
		expect(await req.answer).toMatch(/^HTTP\/1\.1 401/);
		expect(existsSync(marker)).toBe(false);
		expect(audit().some(r => JSON.stringify(r).includes(marker))).toBe(false);
		await a2a("/a2a token revoke slow26");
	}, 60_000);

	test("/host-llm: the old secret's switch-off sent after a rotate -> 401, the takeover stays as it was", async () => {
		const secret = await addToken("slowllm");
		const body = JSON.stringify({ enabled: false });
		const req = slowRequest("/host-llm", auth(secret), Buffer.byteLength(body));
		await req.seen;
		await rotate("slowllm");
		req.finish(body);
		expect(await req.answer).toMatch(/^HTTP\/1\.1 401/);
		const state = (await (await fetch(new URL("/host-llm", host.url), { headers: host.headers() })).json()) as {
			enabled: boolean;
		};
		expect(state.enabled).toBe(true);
		await a2a("/a2a token revoke slowllm");
	}, 60_000);

	test("/blob: a revoked token's upload still streaming stops taking bytes; what landed stays, audited", async () => {
		const secret = await addToken("slowblob");
		const file = join(host.cwd, `streaming-${crypto.randomUUID()}.bin`);
		const total = 64 * 1024 * 1024;
		const req = slowRequest(`/blob?path=${encodeURIComponent(file)}`, auth(secret), total);
		await req.seen;
		const chunk = "x".repeat(64 * 1024);
		let sent = 0;
		const pump = setInterval(() => {
			if (sent < total && !req.sock.destroyed) {
				req.sock.write(chunk);
				sent += chunk.length;
			}
		}, 20);
		try {
			await waitFor("some bytes landed", () => existsSync(file) && statSync(file).size > 0);
			await a2a("/a2a token revoke slowblob");
			const answer = await req.answer;
			expect(answer === "" || /^HTTP\/1\.1 (4|5)\d\d/.test(answer)).toBe(true);
			await waitFor("the upload's audit record", () =>
				audit().some(r => r.tool === "blob:write" && r.token === "slowblob"),
			);
			const rec = audit().find(r => r.tool === "blob:write" && r.token === "slowblob") as Record<string, unknown>;
			expect(rec).toMatchObject({ isError: true, error: "token revoked or rotated" });
			const landed = statSync(file).size;
			expect(landed).toBeGreaterThan(0);
			expect(landed).toBeLessThan(total);
			expect((JSON.parse(String(rec.args)) as { bytes: number }).bytes).toBe(landed);
		} finally {
			clearInterval(pump);
			req.sock.destroy();
		}
	}, 90_000);
});

async function callTool(secret: string, sid: string, name: string, args: Record<string, unknown>, id: number) {
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
		{ ...auth(secret), "mcp-session-id": sid },
	);
	return (await res.json()) as { result?: { isError: boolean; content: Array<{ text: string }> }; error?: unknown };
}

describe("issue 20 item 4: one token's initialize flood never evicts or ends another token's session", () => {
	test("200 initializes of one token: the owner's idle session and its running call are untouched", async () => {
		const flood = await addToken("flood");
		const idle = await open(host.token);
		const busy = await open(host.token);
		const running = callTool(host.token, busy, "bash", { command: "sleep 2; echo still-running-ok" }, 1);
		const floods: string[] = [];
		for (let i = 0; i < 200; i++) floods.push(await open(flood, "flood"));
		const done = await running;
		expect(done.error).toBeUndefined();
		expect(done.result?.isError).toBe(false);
		expect(done.result?.content[0]?.text).toContain("still-running-ok");
		expect(await ping(host.token, idle)).toBe(200);
		// The flood kept only its own share (32 of 64 with two live tokens), its oldest evicted.
		expect(await ping(flood, floods[0] as string)).toBe(404);
		expect(await ping(flood, floods[199] as string)).toBe(200);
		expect(await a2a("/a2a")).toMatch(/\n {2}flood \S+: 32 session\(s\)/);
		await a2a("/a2a token revoke flood");
		for (const sid of [idle, busy]) await endSession(host.token, sid);
	}, 120_000);
});

describe("issue 20 item 5: a flood of refused calls cannot rotate the audit history away", () => {
	test("2,000 unknown-tool calls with 1 KiB arguments: earlier records stay in the current file; counts add up", async () => {
		const noisy = await addToken("noisy");
		const sid = await open(noisy, "noisy-client");
		const marker = `before-the-flood-${crypto.randomUUID()}`;
		const real = await callTool(noisy, sid, "bash", { command: `echo ${marker}` }, 1);
		expect(real.result?.isError).toBe(false);
		const big = { pad: Array.from({ length: 9 }, (_, i) => `${i}`.repeat(110)) };
		const FLOOD = 2000;
		let next = 0;
		const worker = async () => {
			for (let i = next++; i < FLOOD; i = next++) {
				const r = await callTool(noisy, sid, `no-such-tool-${i % 5}`, big, 100 + i);
				if (r.result?.isError !== true) throw new Error(`call ${i} was not refused`);
			}
		};
		await Promise.all(Array.from({ length: 8 }, worker));
		await waitFor("every refusal counted", () => {
			const counted = audit()
				.filter(r => r.phase === "refused" && r.token === "noisy")
				.reduce((n, r) => n + Number(r.count), 0);
			return counted === FLOOD;
		});
		const records = audit();
		const mine = records.filter(r => JSON.stringify(r).includes(marker));
		expect(mine.map(r => r.phase)).toEqual(["start", "done"]);
		const refused = records.filter(r => r.phase === "refused" && r.token === "noisy");
		// One record per window of a second at most twice over: far fewer than the 4,000 records of before.
		expect(refused.length).toBeLessThan(60);
		expect(refused[0]).toMatchObject({ client: "noisy-client", tool: "no-such-tool-0", count: 1 });
		await a2a("/a2a token revoke noisy");
	}, 120_000);
});

describe("issue 26 item 1: a revoked or rotated token's sessions end and free their slots", () => {
	test("rotate -> the old session id is refused with the new secret too, and /a2a shows no session for it", async () => {
		const old = await addToken("rot26");
		const sid = await open(old);
		expect(await ping(old, sid)).toBe(200);
		const fresh = await rotate("rot26");
		expect(await ping(fresh, sid)).toBe(404);
		expect(await ping(old, sid)).toBe(401);
		const status = await a2a("/a2a");
		expect(status).toMatch(/\n {2}rot26 \S+: 0 session\(s\)/);
		await a2a("/a2a token revoke rot26");
	}, 60_000);

	test("revoke -> the token's sessions leave the table: another token fits 32 more sessions where it did not", async () => {
		// owner + victim live: each may hold 32 of the 64. Both fill their share.
		const victim = await addToken("victim26");
		const mine: string[] = [];
		for (let i = 0; i < 32; i++) await open(victim);
		for (let i = 0; i < 32; i++) mine.push(await open(host.token));
		expect(await a2a("/a2a")).toContain("sessions: 64/64");
		// Before: the owner's 33rd session does not fit; it costs the owner its own oldest one.
		const extra = await open(host.token);
		expect(await ping(host.token, mine[0] as string)).toBe(404);
		mine.shift();
		mine.push(extra);
		await a2a("/a2a token revoke victim26");
		const after = await a2a("/a2a");
		expect(after).toContain("sessions: 32/64");
		expect(after).not.toContain("victim26");
		// After: the owner alone may hold all 64, and the victim's 32 slots are free for it.
		for (let i = 0; i < 32; i++) mine.push(await open(host.token));
		for (const sid of mine) expect(await ping(host.token, sid)).toBe(200);
		expect(await a2a("/a2a")).toContain("sessions: 64/64");
		for (const sid of mine) await endSession(host.token, sid);
	}, 120_000);
});
