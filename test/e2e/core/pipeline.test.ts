/**
 * The request pipeline over real HTTP against the pinned omp host: one assertion per row of the
 * error table (status, JSON-RPC code, headers), checked on the wire, plus sessions.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import Ajv2020 from "ajv/dist/2020.js";
import { ERRORS, type ErrorKind } from "../../../src/core/errors.ts";
import { MAX_SESSIONS } from "../../../src/core/sessions.ts";
import { type Host, openSession, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

let host: Host;
let sid: string;

useSharedHost({ session: true }, h => ({ host, sid } = h));

async function expectRow(res: Response, kind: ErrorKind, id: unknown = null): Promise<Record<string, unknown>> {
	const row = ERRORS[kind];
	expect(res.status).toBe(row.status);
	const body = (await res.json()) as Record<string, unknown>;
	expect(body).toEqual({ jsonrpc: "2.0", id, error: { code: row.code, message: row.message } });
	return body;
}

const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } };

/** Sends raw bytes over TCP and returns the first response head (status line + headers). */
function rawRequest(port: number, head: string, bodyChunks: string[], waitMs = 300): Promise<string> {
	return new Promise((resolve, reject) => {
		const sock = connect(port, "127.0.0.1");
		let out = "";
		sock.on("data", d => {
			out += d.toString("latin1");
		});
		sock.on("error", reject);
		sock.on("close", () => resolve(out));
		sock.write(head);
		let i = 0;
		const next = () => {
			if (i < bodyChunks.length) {
				sock.write(bodyChunks[i++] ?? "", () => setTimeout(next, 5));
			} else {
				setTimeout(() => sock.destroy(), waitMs);
			}
		};
		next();
	});
}

describe("routes", () => {
	for (const path of [
		"/nope",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-authorization-server",
		"/.well-known/openid-configuration",
		"/authorize",
		"/token",
		"/register",
	]) {
		test(`${path} without a token -> plain 404`, async () => {
			const res = await fetch(new URL(path, host.url), { method: path === "/register" ? "POST" : "GET" });
			expect(res.status).toBe(404);
			expect(res.headers.get("www-authenticate")).toBeNull();
			expect(await res.text()).toBe("not found\n");
		});
	}

	test("/mcp serves the same endpoint as /", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 5, method: "ping" }, { "mcp-session-id": sid }, "/mcp");
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 5, result: {} });
	});
});

describe("Host / Origin -> 403 before auth", () => {
	test("foreign Host header without a token -> 403 forbidden_host", async () => {
		const head = `POST / HTTP/1.1\r\nHost: evil.example:${host.port}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n`;
		const out = await rawRequest(host.port, head, ["{}"]);
		expect(out.startsWith("HTTP/1.1 403")).toBe(true);
		expect(out).toContain(ERRORS.forbidden_host.message);
	});

	test("foreign Origin with a valid token -> 403 forbidden_origin", async () => {
		const res = await rpcPost(host, init, { origin: "http://evil.example" });
		await expectRow(res, "forbidden_origin");
	});

	test("same-origin Origin is accepted", async () => {
		const res = await rpcPost(host, init, { origin: `http://127.0.0.1:${host.port}` });
		expect(res.status).toBe(200);
		await res.text();
	});

	test("localhost Host name is accepted", async () => {
		const res = await fetch(`http://localhost:${host.port}/`, {
			method: "POST",
			headers: host.headers(),
			body: JSON.stringify(init),
		});
		expect(res.status).toBe(200);
		await res.text();
	});
});

describe("methods -> 405 with Allow", () => {
	test("GET / -> 405, Allow: POST, DELETE (no token needed to learn that)", async () => {
		const res = await fetch(host.url, { headers: { accept: "text/event-stream" } });
		await expectRow(res, "method_not_allowed");
		expect(res.headers.get("allow")).toBe("POST, DELETE");
	});

	test("PUT /mcp with a token -> 405", async () => {
		const res = await fetch(new URL("/mcp", host.url), { method: "PUT", headers: host.headers(), body: "{}" });
		await expectRow(res, "method_not_allowed");
	});
});

describe("auth -> 401 with WWW-Authenticate", () => {
	test("missing Authorization -> 401 unauthorized, plain challenge", async () => {
		const res = await fetch(host.url, { method: "POST", body: JSON.stringify(init) });
		await expectRow(res, "unauthorized");
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge"');
	});

	test("Basic scheme -> 401 unauthorized", async () => {
		const res = await fetch(host.url, { method: "POST", headers: { authorization: "Basic abc" }, body: "{}" });
		await expectRow(res, "unauthorized");
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge"');
	});

	test("wrong Bearer token -> 401 invalid_token", async () => {
		const res = await fetch(host.url, {
			method: "POST",
			headers: { authorization: `Bearer ${"x".repeat(43)}` },
			body: JSON.stringify(init),
		});
		await expectRow(res, "invalid_token");
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge", error="invalid_token"');
	});

	test("scheme is case-insensitive", async () => {
		const res = await rpcPost(host, init, { authorization: `bEaReR ${host.token}` });
		expect(res.status).toBe(200);
		await res.text();
	});

	test("DELETE without a token -> 401 and the session survives", async () => {
		const res = await fetch(host.url, { method: "DELETE", headers: { "mcp-session-id": sid } });
		await expectRow(res, "unauthorized");
		const ping = await rpcPost(host, { jsonrpc: "2.0", id: 9, method: "ping" }, { "mcp-session-id": sid });
		expect(ping.status).toBe(200);
		await ping.text();
	});

	test("refusals are counted on host stderr, never on stdout", async () => {
		// stderr is read by a pump: the count line can arrive a moment after the refusal's answer (host2 in CI).
		await waitFor("the refusal count on stderr", () => host.stderr.includes("unauthorized request(s) refused so far"));
		expect(host.frames.filter(f => f.type === "non_json_stdout")).toEqual([]);
	});
});

describe("protocol version, body, envelope", () => {
	test("unsupported MCP-Protocol-Version -> 400 -32022 naming the served versions (2026-07-28 is served now)", async () => {
		const res = await rpcPost(host, init, { "mcp-protocol-version": "2027-01-01" });
		expect(res.status).toBe(400);
		const { code, message } = ERRORS.unsupported_protocol_version;
		expect(await res.json()).toEqual({
			jsonrpc: "2.0",
			id: init.id,
			error: {
				code,
				message,
				data: { supported: ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"], requested: "2027-01-01" },
			},
		});
	});

	for (const v of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
		test(`MCP-Protocol-Version ${v} is accepted`, async () => {
			const res = await rpcPost(
				host,
				{ jsonrpc: "2.0", id: 3, method: "ping" },
				{
					"mcp-session-id": sid,
					"mcp-protocol-version": v,
				},
			);
			expect(res.status).toBe(200);
			await res.text();
		});
	}

	test("Content-Length over 4 MiB -> 413 before the body is sent", async () => {
		const head = `POST / HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\nContent-Type: application/json\r\nContent-Length: ${4 * 1024 * 1024 + 1}\r\n\r\n`;
		const out = await rawRequest(host.port, head, []);
		expect(out.startsWith("HTTP/1.1 413")).toBe(true);
	});

	test("chunked body crossing 4 MiB -> 413", async () => {
		const chunk = "x".repeat(256 * 1024);
		const res = await fetch(host.url, {
			method: "POST",
			headers: host.headers(),
			body: new ReadableStream({
				start(c) {
					for (let i = 0; i < 17; i++) c.enqueue(new TextEncoder().encode(chunk));
					c.close();
				},
			}),
		});
		await expectRow(res, "body_too_large");
	});

	test("not JSON -> 400 -32700", async () => {
		await expectRow(await rpcPost(host, '{"jsonrpc":"2.0",', { "mcp-session-id": sid }), "parse_error");
	});

	test("invalid UTF-8 -> 400 -32700", async () => {
		const res = await fetch(host.url, {
			method: "POST",
			headers: host.headers({ "mcp-session-id": sid }),
			body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
		});
		await expectRow(res, "parse_error");
	});

	test("batch array -> 400 -32600", async () => {
		const res = await rpcPost(host, [{ jsonrpc: "2.0", id: 1, method: "ping" }], { "mcp-session-id": sid });
		await expectRow(res, "invalid_request");
	});

	test("wrong jsonrpc version -> 400 -32600 with the readable id", async () => {
		const res = await rpcPost(host, { jsonrpc: "1.0", id: 7, method: "ping" }, { "mcp-session-id": sid });
		await expectRow(res, "invalid_request", 7);
	});
});

describe("sessions", () => {
	test("initialize issues a visible-ASCII session id of 36 chars", async () => {
		const res = await rpcPost(host, init);
		const id = res.headers.get("mcp-session-id") ?? "";
		expect(id).toMatch(/^[\x21-\x7e]{36}$/);
		await res.text();
	});

	test("missing Mcp-Session-Id -> 400", async () => {
		await expectRow(await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "tools/list" }), "session_required", 1);
	});

	test("unknown Mcp-Session-Id -> 404", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": "nope" });
		await expectRow(res, "session_not_found", 1);
	});

	test("notifications -> 202 with an empty body", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": sid });
		expect(res.status).toBe(202);
		expect(await res.text()).toBe("");
	});

	test("DELETE -> 204, then the session is 404", async () => {
		const mine = await openSession(host);
		const del = await fetch(host.url, { method: "DELETE", headers: host.headers({ "mcp-session-id": mine }) });
		expect(del.status).toBe(204);
		const after = await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": mine });
		await expectRow(after, "session_not_found", 1);
		const again = await fetch(host.url, { method: "DELETE", headers: host.headers({ "mcp-session-id": mine }) });
		await expectRow(again, "session_not_found");
	});

	test(`the ${MAX_SESSIONS + 1}th initialize evicts the least recently seen session`, async () => {
		const ids: string[] = [];
		for (let i = 0; i < MAX_SESSIONS; i++) ids.push(await openSession(host));
		// Touch the oldest so the second oldest becomes the least recently seen.
		const ping = (s: string) => rpcPost(host, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": s });
		expect((await ping(ids[0] ?? "")).status).toBe(200);
		await openSession(host);
		expect((await ping(ids[0] ?? "")).status).toBe(200);
		await expectRow(await ping(ids[1] ?? ""), "session_not_found", 1);
		expect((await ping(ids[2] ?? "")).status).toBe(200);
		// The shared session was among the evicted: later tests get a fresh one.
		sid = await openSession(host);
	});
});

describe("dispatch", () => {
	test("initialize echoes each supported version and counters an unknown one with 2025-11-25", async () => {
		for (const [asked, answered] of [
			["2025-03-26", "2025-03-26"],
			["2025-06-18", "2025-06-18"],
			["2025-11-25", "2025-11-25"],
			["2024-11-05", "2025-11-25"],
		]) {
			const res = await rpcPost(host, { ...init, params: { protocolVersion: asked } });
			const body = (await res.json()) as { result: Record<string, unknown> };
			expect(body.result.protocolVersion).toBe(answered);
			expect(body.result.capabilities).toEqual({ tools: { listChanged: false } });
			expect((body.result.serverInfo as { name: string }).name).toBe("omp-a2a-bridge");
		}
	});

	test("unknown method -> 200 -32601", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 4, method: "resources/list" }, { "mcp-session-id": sid });
		await expectRow(res, "method_not_found", 4);
	});

	test("tools/call with a non-string name -> -32602", async () => {
		const res = await rpcPost(
			host,
			{ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: 5 } },
			{ "mcp-session-id": sid },
		);
		await expectRow(res, "invalid_params", 6);
	});

	test("tools/call with array arguments -> -32602", async () => {
		const res = await rpcPost(
			host,
			{ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "read", arguments: [] } },
			{ "mcp-session-id": sid },
		);
		await expectRow(res, "invalid_params", 8);
	});

	test("tools/list lists the Main registry with object schemas and tier-backed annotations", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": sid });
		const body = (await res.json()) as { result: { tools: Array<Record<string, unknown>>; nextCursor?: string } };
		const byName = new Map(body.result.tools.map(t => [t.name as string, t]));
		expect(body.result.nextCursor).toBeUndefined();
		for (const name of ["read", "bash", "edit", "write", "grep"]) expect(byName.has(name)).toBe(true);
		for (const t of body.result.tools) expect((t.inputSchema as { type: string }).type).toBe("object");
		expect(byName.get("read")?.annotations).toEqual({ readOnlyHint: true });
		expect(byName.get("bash")?.annotations).toEqual({
			readOnlyHint: false,
			destructiveHint: true,
			openWorldHint: true,
		});
		expect((byName.get("read")?.inputSchema as { required?: string[] } | undefined)?.required).toEqual(["path"]);
	});

	test("every listed inputSchema is valid JSON Schema 2020-12 (ajv, strict) and compiles to a working validator", async () => {
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 3, method: "tools/list" }, { "mcp-session-id": sid });
		const tools = ((await res.json()) as { result: { tools: Array<{ name: string; inputSchema: object }> } }).result
			.tools;
		expect(tools.length).toBeGreaterThan(5);
		const ajv = new Ajv2020({ strict: true, allErrors: true });
		const problems: string[] = [];
		for (const t of tools) {
			if (!ajv.validateSchema(t.inputSchema)) problems.push(`${t.name}: ${ajv.errorsText(ajv.errors)}`);
			else {
				try {
					ajv.compile(t.inputSchema);
				} catch (err) {
					problems.push(`${t.name}: ${(err as Error).message}`);
				}
			}
		}
		expect(problems).toEqual([]);
		const read = ajv.compile(tools.find(t => t.name === "read")?.inputSchema ?? {});
		expect(read({ path: "/tmp/x" })).toBe(true);
		expect(read({})).toBe(false);
	});
});
