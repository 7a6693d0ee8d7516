/**
 * Hardening round 3 on the wire, against the real host (contract §16, issue 20 items 3, 4, 9 and issue
 * 26 item 1): the IPv4-mapped loopback bind keeps the Host guard, and a client that half-closes after
 * its request (shutdown(SHUT_WR)) gets its whole answer, checked through a raw socket.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, openSession, withHost } from "../../helpers/host.ts";
import { modernRequest } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

/** One raw HTTP/1.1 exchange: `request` written, then (with halfClose) the write side shut; all bytes read. */
function raw(port: number, request: string, halfClose: boolean, host = "127.0.0.1"): Promise<string> {
	return new Promise((resolve, reject) => {
		const sock = connect({ host, port, allowHalfOpen: true });
		let got = "";
		const timer = setTimeout(() => {
			sock.destroy();
			resolve(`${got}<timeout>`);
		}, 30_000);
		sock.on("connect", () => {
			if (halfClose) sock.end(request);
			else sock.write(request);
		});
		sock.on("data", d => {
			got += d.toString("utf8");
			if (!halfClose && /\r\n\r\n[\s\S]*\}\s*$/.test(got)) sock.end();
		});
		sock.on("end", () => {
			clearTimeout(timer);
			resolve(got);
		});
		sock.on("error", err => {
			clearTimeout(timer);
			reject(err);
		});
	});
}

function post(h: Host, body: unknown, extra: Record<string, string> = {}): string {
	const text = JSON.stringify(body);
	const headers = {
		host: `127.0.0.1:${h.port}`,
		authorization: `Bearer ${h.token}`,
		"content-type": "application/json",
		accept: "application/json, text/event-stream",
		"content-length": String(Buffer.byteLength(text)),
		connection: "close",
		...extra,
	};
	return `POST / HTTP/1.1\r\n${Object.entries(headers)
		.map(([k, v]) => `${k}: ${v}`)
		.join("\r\n")}\r\n\r\n${text}`;
}

const INIT = {
	jsonrpc: "2.0",
	id: 0,
	method: "initialize",
	params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

describe("issue 20 item 9 on the wire", () => {
	test("deeply nested arguments -> -32602 naming the argument, not a stack overflow", async () => {
		await withHost({}, async h => {
			const sid = await openSession(h);
			const depth = 100_000;
			const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":${"[".repeat(depth)}${"]".repeat(depth)}}}}`;
			const res = await fetch(h.url, {
				method: "POST",
				headers: h.headers({
					"mcp-session-id": sid,
					"content-type": "application/json",
					accept: "application/json, text/event-stream",
				}),
				body,
			});
			const answer = (await res.json()) as { error?: { code: number; message: string } };
			expect(answer.error?.code).toBe(-32602);
			expect(answer.error?.message).toBe("invalid arguments for tool 'read': 'path' is nested deeper than 64 levels");
		});
	}, 60_000);

	test("host ::ffff:127.0.0.1 is a loopback bind: no exposure warning, and a foreign Host is refused", async () => {
		await withHost({ config: { host: "::ffff:127.0.0.1" } }, async h => {
			expect(await raw(h.port, post(h, INIT), false)).toMatch(/^HTTP\/1\.1 200/);
			const evil = await raw(h.port, post(h, INIT, { host: "evil.example" }), false);
			expect(evil).toMatch(/^HTTP\/1\.1 403/);
			expect(evil).toContain("forbidden");
			expect(h.notifications().some(m => m.includes("non-loopback"))).toBe(false);
		});
	}, 60_000);

	test("a client that half-closes after its request (shutdown(SHUT_WR)) gets no answer; a 2025 call runs to its end, a 2026-07-28 call is cancelled", async () => {
		await withHost({}, async h => {
			const sid = await openSession(h);
			const marker = join(h.cwd, "ran");
			const call = post(
				h,
				{
					jsonrpc: "2.0",
					id: 7,
					method: "tools/call",
					params: { name: "bash", arguments: { command: `sleep 1; touch ${marker}` } },
				},
				{ "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
			);
			// Bun's HTTP server closes a connection whose client sent FIN: not one byte of the answer comes back.
			expect(await raw(h.port, call, true)).toBe("");
			await waitFor("the call's done record", () => auditRecords(h).some(r => r.phase === "done" && r.tool === "bash"));
			const done = auditRecords(h).find(r => r.phase === "done" && r.tool === "bash");
			expect(done).toMatchObject({ isError: false, token: "owner" });
			expect(done?.cancelled).toBeUndefined();
			expect(existsSync(marker)).toBe(true);

			// 2026-07-28: closing the connection of a JSON request is the cancel, and a half-close is seen as that.
			const modernMarker = join(h.cwd, "modern-ran");
			const { headers, body } = modernRequest(h, "tools/call", {
				name: "bash",
				arguments: { command: `sleep 2; touch ${modernMarker}` },
			});
			const modern = `POST / HTTP/1.1\r\n${Object.entries({
				...headers,
				host: `127.0.0.1:${h.port}`,
				"content-length": String(Buffer.byteLength(body)),
			})
				.map(([k, v]) => `${k}: ${v}`)
				.join("\r\n")}\r\n\r\n${body}`;
			expect(await raw(h.port, modern, true)).toBe("");
			await waitFor("the modern call's done record", () =>
				auditRecords(h).some(r => r.phase === "done" && r.sid === null && r.tool === "bash"),
			);
			const modernDone = auditRecords(h).find(r => r.phase === "done" && r.sid === null);
			expect(modernDone).toMatchObject({ isError: true, cancelled: true, tool: "bash" });
		});
	}, 60_000);
});
