/**
 * Contract §15, timeouts, against the real host: a connection that runs no tool call and no `/blob`
 * transfer is closed within 30 s whatever state it was left in, before auth too; a call longer than
 * the idle bound is not cut, and its connection idles out afterwards. Sockets are raw TCP (node:net)
 * so the test controls every byte; closes are awaited with a bound, never timed.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { type Host, openSession, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

/** The contract's bound is 30 s; a close must be seen before this. */
const CLOSE_BOUND_MS = 45_000;

interface Raw {
	sock: Socket;
	text(): string;
	closed: Promise<boolean>;
}

/** Opens a socket, writes `data`, and resolves `closed` true when the server closes it (false at the bound). */
function raw(port: number, data: string, boundMs = CLOSE_BOUND_MS): Promise<Raw> {
	return new Promise((resolve, reject) => {
		let text = "";
		const sock = connect(port, "127.0.0.1", () => {
			sock.write(data);
			const closed = new Promise<boolean>(done => {
				const t = setTimeout(() => done(false), boundMs);
				sock.on("close", () => {
					clearTimeout(t);
					done(true);
				});
			});
			resolve({ sock, text: () => text, closed });
		});
		sock.on("data", d => {
			text += d.toString("latin1");
		});
		sock.on("error", reject);
	});
}

const fdCount = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

/**
 * The kernel's view of one loopback connection (/proc/net/tcp): true once everything the client
 * wrote has been sent and the server process has read it all off its socket (both queues empty).
 */
function serverHasRead(sock: Socket, serverPort: number): boolean {
	if (sock.writableLength > 0 || sock.localPort === undefined) return false;
	const hex = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
	const queues = (local: string, remote: string) =>
		readFileSync("/proc/net/tcp", "utf8")
			.split("\n")
			.map(l => l.trim().split(/\s+/))
			.find(f => f[1] === local && f[2] === remote)?.[4];
	const client = queues(hex(sock.localPort), hex(serverPort));
	const server = queues(hex(serverPort), hex(sock.localPort));
	return client === "00000000:00000000" && server === "00000000:00000000";
}

describe("idle connections are closed (default 30 s bound)", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("half-sent headers, half-sent bodies, idle keep-alive after 401/403/404 -> every socket closed within the bound; fds back", async () => {
		const p = host.port;
		const h = `Host: 127.0.0.1:${p}\r\n`;
		const auth = `Authorization: Bearer ${host.token}\r\n`;
		const kinds: Record<string, string> = {
			"half-sent headers": `POST / HTTP/1.1\r\n${h}X-Partial: yes`,
			"half-sent body, no token": `POST / HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"`,
			"half-sent body, with token": `POST / HTTP/1.1\r\n${h}${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"`,
			"half-sent upload, no token": `POST /blob?path=x HTTP/1.1\r\n${h}Content-Length: 1000\r\n\r\nabc`,
			"keep-alive after 401": `POST / HTTP/1.1\r\n${h}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
			"keep-alive after 403": `POST / HTTP/1.1\r\nHost: evil.example\r\n${auth}Content-Length: 2\r\n\r\n{}`,
			"keep-alive after 404": `GET /nowhere HTTP/1.1\r\n${h}\r\n`,
			"keep-alive after 405": `GET / HTTP/1.1\r\n${h}${auth}\r\n`,
		};
		const fdsBefore = fdCount(host.proc.pid);
		const perKind = 25;
		const socks: Array<{ kind: string; r: Raw }> = [];
		for (const [kind, data] of Object.entries(kinds)) {
			for (let i = 0; i < perKind; i++) socks.push({ kind, r: await raw(p, data) });
		}
		// A real client still gets through while they idle.
		expect(await openSession(host)).toBeString();
		const results = await Promise.all(socks.map(async s => [s.kind, await s.r.closed] as const));
		const open = results.filter(([, closed]) => !closed).map(([kind]) => kind);
		expect(open).toEqual([]);
		const refusals = socks.filter(s => s.kind.startsWith("keep-alive")).map(s => s.r.text().split("\r\n")[0]);
		expect(new Set(refusals)).toEqual(
			new Set([
				"HTTP/1.1 401 Unauthorized",
				"HTTP/1.1 403 Forbidden",
				"HTTP/1.1 404 Not Found",
				"HTTP/1.1 405 Method Not Allowed",
			]),
		);
		expect(fdCount(host.proc.pid)).toBeLessThanOrEqual(fdsBefore + 5);
	}, 120_000);
});

describe("client aborts", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("a client that hangs up mid-body -> host stderr says client abort, not internal error", async () => {
		const r = await raw(
			host.port,
			`POST / HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\n` +
				`Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"jsonrpc":"2.0",`,
		);
		// The pipeline must be waiting for the rest of the body before the hang-up means anything: the
		// host has read the headers and the start of the body off the socket.
		await waitFor("the host to read what was sent", () => serverHasRead(r.sock, host.port), { timeoutMs: 10_000 });
		r.sock.destroy();
		await waitFor("host stderr to note the abort", () => host.stderr.includes("client aborted"), {
			timeoutMs: 10_000,
			seen: () => host.stderr,
		});
		expect(host.stderr).toContain("a2a-bridge: client aborted POST /");
		expect(host.stderr).not.toContain("internal error");
	}, 30_000);
});

describe("running work holds the connection open (idle bound 2 s via A2A_BRIDGE_IDLE_TIMEOUT_S)", () => {
	let host: Host;
	let sid: string;
	useSharedHost({ session: true, env: { A2A_BRIDGE_IDLE_TIMEOUT_S: "2" } }, h => ({ host, sid } = h));

	test("a tool call three times longer than the idle bound -> answered; the keep-alive connection then idles out", async () => {
		const marker = `held-${crypto.randomUUID()}`;
		const body = JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "tools/call",
			params: { name: "bash", arguments: { command: `sleep 7; echo ${marker}` } },
		});
		const r = await raw(
			host.port,
			`POST / HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\n` +
				`Content-Type: application/json\r\nAccept: application/json\r\nMcp-Session-Id: ${sid}\r\n` +
				`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
			60_000,
		);
		expect(await r.closed).toBe(true);
		expect(r.text()).toStartWith("HTTP/1.1 200");
		expect(r.text()).toContain(marker);
	}, 90_000);
	test("a slow upload, three times longer than the idle bound but never 30 s without a byte -> not cut", async () => {
		const file = join(host.home, "slow.bin");
		const chunk = "u".repeat(16 * 1024);
		const chunks = 24;
		const up = await raw(
			host.port,
			`POST /blob?path=${encodeURIComponent(file)} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\n` +
				`Authorization: Bearer ${host.token}\r\nContent-Length: ${chunk.length * chunks}\r\nConnection: close\r\n\r\n`,
			60_000,
		);
		// 24 chunks 250 ms apart: about 6 s, three idle bounds, never 30 s without a byte. The pause is
		// the slow sender under test, not a wait for something to happen.
		for (let i = 0; i < chunks; i++) {
			up.sock.write(chunk);
			await Bun.sleep(250);
		}
		expect(await up.closed).toBe(true);
		expect(up.text()).toStartWith("HTTP/1.1 200");
		expect(statSync(file).size).toBe(chunk.length * chunks);
	}, 120_000);
});
