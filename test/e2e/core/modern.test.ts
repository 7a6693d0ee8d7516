/**
 * The 2026-07-28 era on the wire against the real host (contract §13): one row per rule of the
 * issue's point 2, sent as raw HTTP so every header and status is the bridge's own.
 */
import { describe, expect, test } from "bun:test";
import { auditRecords } from "../../helpers/audit.ts";
import { callTool, type Host, openSession, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { envelope, MODERN, modernPost, SERVER_INFO_KEY } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

const SERVED = ["2025-03-26", "2025-06-18", "2025-11-25", MODERN];
const b64 = (s: string): string => `=?base64?${Buffer.from(s, "utf8").toString("base64")}?=`;

async function rpcBody(res: Response): Promise<Record<string, unknown>> {
	expect(res.headers.get("content-type")).toStartWith("application/json");
	return (await res.json()) as Record<string, unknown>;
}

async function expectError(res: Response, status: number, code: number, id: number | null = 1) {
	expect(res.status).toBe(status);
	const body = await rpcBody(res);
	expect(body.id).toBe(id);
	expect((body.error as { code: number }).code).toBe(code);
	return body.error as { code: number; message: string; data?: unknown };
}

describe("2026-07-28: methods", () => {
	let host: Host;
	let sid: string;
	useSharedHost({ session: true }, h => ({ host, sid } = h));

	test("server/discover -> versions, tools capability, instructions, cache hints, resultType, serverInfo; no session", async () => {
		const res = await modernPost(host, "server/discover");
		expect(res.status).toBe(200);
		expect(res.headers.get("mcp-session-id")).toBeNull();
		const { result } = (await rpcBody(res)) as { result: Record<string, unknown> };
		expect(result.supportedVersions).toEqual(SERVED);
		expect(result.capabilities).toEqual({
			tools: { listChanged: false },
			extensions: { "io.modelcontextprotocol/tasks": {} },
		});
		expect(String(result.instructions)).toContain("omp host");
		expect(result.resultType).toBe("complete");
		expect(result.ttlMs).toBe(0);
		expect(result.cacheScope).toBe("private");
		expect((result._meta as Record<string, { name: string }>)[SERVER_INFO_KEY]?.name).toBe("omp-a2a-bridge");
	});

	test("tools/list -> the same tools as the 2025 answer plus ttlMs, cacheScope, resultType, serverInfo", async () => {
		const res = await modernPost(host, "tools/list");
		expect(res.status).toBe(200);
		expect(res.headers.get("mcp-session-id")).toBeNull();
		const { result } = (await rpcBody(res)) as { result: Record<string, unknown> };
		const legacy = (await (
			await rpcPost(host, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": sid })
		).json()) as {
			result: { tools: unknown[] };
		};
		expect(result.tools).toEqual(legacy.result.tools);
		expect(Number.isInteger(result.ttlMs) && (result.ttlMs as number) >= 0).toBe(true);
		expect(result.cacheScope).toBe("private");
		expect(result.resultType).toBe("complete");
		expect((result._meta as Record<string, unknown>)[SERVER_INFO_KEY]).toBeDefined();
	});

	test("tools/call without a progress token -> JSON result with resultType and serverInfo; audited with sid null and the client", async () => {
		const marker = `modern-json-${crypto.randomUUID()}`;
		const res = await modernPost(host, "tools/call", { name: "bash", arguments: { command: `echo ${marker}` } });
		expect(res.status).toBe(200);
		const { result } = (await rpcBody(res)) as { result: Record<string, unknown> };
		expect(JSON.stringify(result.content)).toContain(marker);
		expect(result.isError).toBe(false);
		expect(result.resultType).toBe("complete");
		expect((result._meta as Record<string, unknown>)[SERVER_INFO_KEY]).toBeDefined();
		const records = auditRecords(host, marker);
		expect(records.map(r => r.phase)).toEqual(["start", "done"]);
		for (const r of records) {
			expect(r.sid).toBeNull();
			expect(r.client).toBe("raw-wire");
		}
	}, 30_000);

	test("tools/call with a progress token -> SSE: progress notifications, then the result with resultType", async () => {
		const res = await modernPost(host, "tools/call", {
			name: "bash",
			arguments: { command: "for i in 1 2 3; do echo step$i; sleep 0.4; done" },
			_meta: { progressToken: "p-1" },
		});
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toStartWith("text/event-stream");
		const events = (await res.text())
			.split("\n\n")
			.filter(b => b.startsWith("data: "))
			.map(b => JSON.parse(b.slice(6)) as Record<string, unknown>);
		const progress = events.filter(e => e.method === "notifications/progress");
		expect(progress.length).toBeGreaterThanOrEqual(1);
		expect(progress[0]?.params).toMatchObject({ progressToken: "p-1" });
		const final = events.at(-1) as { id: number; result: Record<string, unknown> };
		expect(final.id).toBe(1);
		expect(JSON.stringify(final.result.content)).toContain("step3");
		expect(final.result.resultType).toBe("complete");
	}, 30_000);

	test("a bogus Mcp-Session-Id on a modern request is ignored (never 404)", async () => {
		const res = await modernPost(host, "tools/list", {}, { headers: { "mcp-session-id": "no-such-session" } });
		expect(res.status).toBe(200);
	});

	test("a client notification -> 202", async () => {
		const res = await fetch(host.url, {
			method: "POST",
			headers: host.headers({ "mcp-protocol-version": MODERN, "mcp-method": "notifications/cancelled" }),
			body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }),
		});
		expect(res.status).toBe(202);
	});

	test("the 2025 era on the same endpoint is untouched: a session call still works", async () => {
		const r = await callTool(host, sid, "bash", { command: "echo still-2025" }, 9);
		expect(JSON.stringify(r.body)).toContain("still-2025");
		expect((r.body.result as Record<string, unknown>).resultType).toBeUndefined();
	}, 30_000);

	test("/mcp serves the era too; auth still applies (no token -> 401)", async () => {
		const ok = await modernPost(host, "tools/list", {}, {});
		expect(ok.status).toBe(200);
		const res = await fetch(new URL("/mcp", host.url), {
			method: "POST",
			headers: { "content-type": "application/json", "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } }),
		});
		expect(res.status).toBe(401);
	});
});

describe("2026-07-28: refusals", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("Mcp-Method missing -> 400 -32020", async () => {
		await expectError(await modernPost(host, "tools/list", {}, { headers: { "mcp-method": null } }), 400, -32020);
	});
	test("Mcp-Method different from the body -> 400 -32020", async () => {
		await expectError(
			await modernPost(host, "tools/list", {}, { headers: { "mcp-method": "tools/call" } }),
			400,
			-32020,
		);
	});
	test("Mcp-Method in base64 form -> accepted", async () => {
		const res = await modernPost(host, "tools/list", {}, { headers: { "mcp-method": b64("tools/list") } });
		expect(res.status).toBe(200);
	});
	const call = { name: "read", arguments: { path: "/nonexistent-modern" } };
	test("Mcp-Name missing on tools/call -> 400 -32020, the tool does not run", async () => {
		await expectError(await modernPost(host, "tools/call", call, { headers: { "mcp-name": null } }), 400, -32020);
		expect(auditRecords(host, "nonexistent-modern")).toEqual([]);
	});
	test("Mcp-Name different from params.name -> 400 -32020", async () => {
		await expectError(await modernPost(host, "tools/call", call, { headers: { "mcp-name": "bash" } }), 400, -32020);
	});
	test("Mcp-Name malformed base64 -> 400 -32020", async () => {
		await expectError(
			await modernPost(host, "tools/call", call, { headers: { "mcp-name": "=?base64?cmVhZA?=" } }),
			400,
			-32020,
		);
	});
	test("Mcp-Name in base64 form -> the call runs", async () => {
		const res = await modernPost(host, "tools/call", call, { headers: { "mcp-name": b64("read") } });
		expect(res.status).toBe(200);
		expect(((await rpcBody(res)).result as Record<string, unknown>).resultType).toBe("complete");
	}, 30_000);
	test("envelope version different from the header -> 400 -32020", async () => {
		const meta = { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2025-11-25" };
		await expectError(await modernPost(host, "tools/list", {}, { meta }), 400, -32020);
	});

	for (const version of ["2027-01-01", "2024-11-05"]) {
		test(`MCP-Protocol-Version ${version} -> 400 -32022 with data {supported, requested} and the request's id`, async () => {
			const res = await modernPost(host, "tools/list", {}, { headers: { "mcp-protocol-version": version } });
			const err = await expectError(res, 400, -32022, 1);
			expect(err.data).toEqual({ supported: SERVED, requested: version });
		});
	}
	test("the 2025 era gets the same -32022 answer (status stays 400)", async () => {
		const res = await rpcPost(
			host,
			{ jsonrpc: "2.0", id: 3, method: "tools/list" },
			{ "mcp-protocol-version": "1999-01-01" },
		);
		const err = await expectError(res, 400, -32022, 3);
		expect(err.data).toEqual({ supported: SERVED, requested: "1999-01-01" });
	});

	for (const method of ["resources/list", "ping", "initialize", "logging/setLevel"]) {
		test(`${method} -> 404 -32601 (not a method of the era)`, async () => {
			await expectError(await modernPost(host, method), 404, -32601);
		});
	}
	test("the 2025 era keeps its 200 -32601 for an unknown method", async () => {
		const sid = await openSession(host);
		const res = await rpcPost(host, { jsonrpc: "2.0", id: 4, method: "nope/nope" }, { "mcp-session-id": sid });
		await expectError(res, 200, -32601, 4);
	});

	test("no _meta -> 400 -32602", async () => {
		await expectError(await modernPost(host, "tools/list", {}, { meta: null }), 400, -32602);
	});
	test("_meta without clientCapabilities -> 400 -32602", async () => {
		const meta = { "io.modelcontextprotocol/protocolVersion": MODERN };
		await expectError(await modernPost(host, "tools/list", {}, { meta }), 400, -32602);
	});
	test("_meta without protocolVersion -> 400 -32602", async () => {
		const meta = { "io.modelcontextprotocol/clientCapabilities": {} };
		await expectError(await modernPost(host, "tools/list", {}, { meta }), 400, -32602);
	});
	test("tools/call with non-object arguments -> 400 -32602, nothing audited", async () => {
		const res = await modernPost(host, "tools/call", { name: "bash", arguments: "echo no-args-modern" });
		await expectError(res, 400, -32602);
		expect(auditRecords(host, "no-args-modern")).toEqual([]);
	});
	test("unparsable body -> 400 -32700; a posted response -> 400 -32600", async () => {
		const headers = host.headers({ "mcp-protocol-version": MODERN, "mcp-method": "tools/list" });
		await expectError(await fetch(host.url, { method: "POST", headers, body: "{nope" }), 400, -32700, null);
		const posted = JSON.stringify({ jsonrpc: "2.0", id: 5, result: {} });
		await expectError(await fetch(host.url, { method: "POST", headers, body: posted }), 400, -32600, 5);
	});
	test("hostile clientInfo name (100 KB) -> the call runs; the audit keeps 64 characters and an ellipsis", async () => {
		const marker = `long-client-${crypto.randomUUID()}`;
		const meta = { ...envelope(), "io.modelcontextprotocol/clientInfo": { name: "c".repeat(100_000), version: "0" } };
		const res = await modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command: `echo ${marker}` } },
			{ meta },
		);
		expect(res.status).toBe(200);
		const records = await waitFor(
			"two audit records",
			() => {
				const r = auditRecords(host, marker);
				return r.length === 2 ? r : undefined;
			},
			{ timeoutMs: 5000 },
		);
		// One rule for both eras' client names (src/core/client-name.ts): 64 characters, then "…".
		expect(String(records[0]?.client)).toBe(`${"c".repeat(64)}…`);
	}, 30_000);
});
