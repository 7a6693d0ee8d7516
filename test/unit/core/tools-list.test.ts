import { describe, expect, test } from "bun:test";
import { BridgeServer } from "../../../src/core/server.ts";
import type { McpTool } from "../../../src/core/types.ts";
import { corePost, envelope, MODERN } from "../../helpers/modern.ts";

const TOKEN = "t".repeat(40);
/** Non-ASCII names, descriptions and ids: the answer's bytes are UTF-8 of the JSON, whatever the string lengths. */
const CATALOG: McpTool[] = [
	{ name: "réad", description: 'Reads — a file ✓ 𝄞 \u2028 "quoted"', inputSchema: { type: "object" } },
	{
		name: "big",
		description: "x".repeat(60_000),
		inputSchema: { type: "object", properties: { p: { type: "string" } } },
	},
];

function server(listTools: () => McpTool[] = () => CATALOG): BridgeServer {
	return new BridgeServer(
		{
			version: "1",
			instructions: "",
			listTools,
			callTool: async () => ({ content: [], isError: false }),
			audit: { start: async () => {}, done: async () => {} },
			log: () => {},
		},
		{ ownerSecret: TOKEN, bindHost: "127.0.0.1", isLoopbackBind: true, allowedOrigins: [] },
	);
}

const post = (headers: Record<string, string>, body: unknown) => corePost(TOKEN, headers, body);

async function session(s: BridgeServer): Promise<string> {
	const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } };
	const res = await s.handle(post({}, { jsonrpc: "2.0", id: 0, method: "initialize", params }));
	return res.headers.get("mcp-session-id") ?? "";
}

/** The answer's exact bytes against the one canonical serialization of what it says. */
async function expectCanonical(res: Response, id: unknown, tools = CATALOG): Promise<Record<string, unknown>> {
	const bytes = new Uint8Array(await res.arrayBuffer());
	const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
	const parsed = JSON.parse(text) as { result: Record<string, unknown> };
	expect(text).toBe(JSON.stringify({ jsonrpc: "2.0", id, result: parsed.result }));
	expect(bytes.length).toBe(Buffer.byteLength(text));
	expect(parsed.result.tools).toEqual(tools);
	return parsed.result;
}

describe("tools/list answer bytes", () => {
	for (const id of [7, "é-✓-𝄞", 'a"b', 12_345_678_901]) {
		test(`2025 era, id ${JSON.stringify(id)} -> exactly the JSON of {jsonrpc, id, result: {tools}}`, async () => {
			const s = server();
			const sid = await session(s);
			const res = await s.handle(post({ "mcp-session-id": sid }, { jsonrpc: "2.0", id, method: "tools/list" }));
			expect(res.headers.get("content-type")).toBe("application/json");
			expect(Object.keys(await expectCanonical(res, id))).toEqual(["tools"]);
		});

		test(`2026-07-28, id ${JSON.stringify(id)} -> the same around tools and the era's members`, async () => {
			const s = server();
			const headers = { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" };
			const body = { jsonrpc: "2.0", id, method: "tools/list", params: { _meta: envelope() } };
			const result = await expectCanonical(await s.handle(post(headers, body)), id);
			expect(Object.keys(result)).toEqual(["tools", "ttlMs", "cacheScope", "resultType", "_meta"]);
		});
	}

	test("answers built back to back and read afterwards keep each its own id (one buffer serves them all)", async () => {
		const s = server();
		const sid = await session(s);
		const list = (id: number) =>
			s.handle(post({ "mcp-session-id": sid }, { jsonrpc: "2.0", id, method: "tools/list" }));
		const answers = await Promise.all([list(1), list(22), list(333)]);
		for (const [i, id] of [1, 22, 333].entries()) await expectCanonical(answers[i] as Response, id);
	});

	test("a catalog that grows past the buffer, then shrinks -> the exact bytes of each list", async () => {
		const small: McpTool[] = [{ name: "a", description: "", inputSchema: { type: "object" } }];
		let current = small;
		const s = server(() => current);
		const sid = await session(s);
		const list = () => s.handle(post({ "mcp-session-id": sid }, { jsonrpc: "2.0", id: 5, method: "tools/list" }));
		await expectCanonical(await list(), 5, small);
		current = CATALOG;
		await expectCanonical(await list(), 5, CATALOG);
		current = small;
		await expectCanonical(await list(), 5, small);
	});
});
