/**
 * Arguments are checked against the tool's own schema before `execute` (contract §15), with the
 * host's validator: a refusal is JSON-RPC -32602 naming the argument, never a runtime TypeError or
 * NaN; what the validator coerces runs coerced; the audit keeps the arguments as received.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { callTool, type Host, rpcPost, useSharedHost } from "../../helpers/host.ts";

let host: Host;
let sid: string;
useSharedHost({ session: true }, h => ({ host, sid } = h));

const records = () => auditRecords<{ phase: string; tool: string; args: string; isError?: boolean }>(host);

describe("arguments checked before execute", () => {
	test("read {} -> -32602 naming `path`; audited as received, as a refusal that never began (contract §16)", async () => {
		const r = await callTool(host, sid, "read", {}, 11);
		expect(r.status).toBe(200);
		const error = r.body.error as { code: number; message: string };
		expect(error.code).toBe(-32602);
		expect(error.message).toContain("read");
		expect(error.message).toContain("path");
		expect(error.message).not.toContain("TypeError");
		// The file's first refusal opens the token's window, so it is written at once, before the reply.
		const recs = records().filter(x => x.tool === "read" && x.args === "{}");
		expect(recs.map(x => x.phase)).toEqual(["refused"]);
	}, 30_000);

	test('bash {"command":"…","timeout":"abc"} -> -32602 naming `timeout`; the command never ran', async () => {
		const marker = `nan-${crypto.randomUUID()}`;
		const r = await callTool(host, sid, "bash", { command: `touch ${marker}`, timeout: "abc" }, 12);
		const error = r.body.error as { code: number; message: string };
		expect(error.code).toBe(-32602);
		expect(error.message).toContain("timeout");
		expect(error.message).not.toContain("NaN");
		expect(existsSync(join(host.cwd, marker))).toBe(false);
	}, 30_000);

	test('bash {"command":123} -> coerced to "123" as the host does for its model; no "is not a function"', async () => {
		const r = await callTool(host, sid, "bash", { command: 123 }, 13);
		expect(r.body.error).toBeUndefined();
		const text = JSON.stringify(r.body.result);
		expect(text).not.toContain("is not a function");
		expect(text).toContain("123");
		const start = records().find(x => x.phase === "start" && x.tool === "bash" && x.args === '{"command":123}');
		expect(start).toBeDefined();
	}, 30_000);

	test('bash {"command":"echo", "timeout":"5"} -> coerced timeout runs normally', async () => {
		const r = await callTool(host, sid, "bash", { command: "echo coerced-ok", timeout: "5" }, 14);
		expect(JSON.stringify(r.body.result)).toContain("coerced-ok");
	}, 30_000);

	test("SSE mode (progressToken): a refusal is the final event, -32602 naming the argument", async () => {
		const res = await rpcPost(
			host,
			{
				jsonrpc: "2.0",
				id: 15,
				method: "tools/call",
				params: { name: "read", arguments: {}, _meta: { progressToken: 1 } },
			},
			{ "mcp-session-id": sid, accept: "application/json, text/event-stream" },
		);
		expect(res.headers.get("content-type")).toBe("text/event-stream");
		const events = (await res.text())
			.split("\n\n")
			.filter(b => b.startsWith("data: "))
			.map(b => JSON.parse(b.slice(6)) as { id?: number; error?: { code: number; message: string } });
		const last = events.at(-1);
		expect(last?.id).toBe(15);
		expect(last?.error?.code).toBe(-32602);
		expect(last?.error?.message).toContain("path");
	}, 30_000);
});
