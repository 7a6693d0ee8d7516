/**
 * The reference for bench/mcp.ts: an MCP server built on the official `@modelcontextprotocol/sdk`
 * the way its own examples build one, with default options and no tuning. `McpServer` with one
 * `echo` tool; the web-standard Streamable HTTP transport (the SDK's own transport for runtimes
 * with Request/Response, which Bun is) served by `Bun.serve`; stateful, one transport and one
 * McpServer per session (`sessionIdGenerator: randomUUID`), default SSE responses; a Bearer check
 * before the transport. Run as its own process, like the host. Token from SDK_REF_TOKEN; prints
 * its port on stdout. SDK_REF_CATALOG names a JSON file of MCP tools (the host's `tools/list`):
 * each is registered too, its JSON Schema turned into zod, so `tools/list` does the same-size work.
 */

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";

const TOKEN = process.env.SDK_REF_TOKEN ?? "";
if (TOKEN === "") throw new Error("SDK_REF_TOKEN is not set");
const EXPECTED = `Bearer ${TOKEN}`;

interface CatalogTool {
	name: string;
	description?: string;
	inputSchema: Record<string, unknown>;
	annotations?: Record<string, boolean>;
}
const CATALOG_FILE = process.env.SDK_REF_CATALOG;
const CATALOG: CatalogTool[] = CATALOG_FILE ? JSON.parse(readFileSync(CATALOG_FILE, "utf8")) : [];

function newServer(): McpServer {
	const server = new McpServer({ name: "sdk-reference", version: "0.0.0" });
	server.registerTool(
		"echo",
		{ description: "Echoes its text", inputSchema: { text: z.string() } },
		async ({ text }) => ({ content: [{ type: "text", text }] }),
	);
	for (const tool of CATALOG) {
		server.registerTool(
			tool.name,
			{
				...(tool.description ? { description: tool.description } : {}),
				inputSchema: z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodObject,
				...(tool.annotations ? { annotations: tool.annotations } : {}),
			},
			async () => ({ content: [{ type: "text", text: "not run by the benchmark" }] }),
		);
	}
	return server;
}

const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();

function jsonError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
	return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

const http = Bun.serve({
	hostname: "127.0.0.1",
	port: 0,
	async fetch(req) {
		if (req.headers.get("authorization") !== EXPECTED) {
			return jsonError(401, -32001, "Unauthorized", { "www-authenticate": "Bearer" });
		}
		const sid = req.headers.get("mcp-session-id");
		if (sid !== null) {
			const transport = transports.get(sid);
			return transport ? transport.handleRequest(req) : jsonError(404, -32001, "Session not found");
		}
		// No session yet: a new transport, which itself refuses anything but an initialize.
		const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
			sessionIdGenerator: randomUUID,
			onsessioninitialized: id => {
				transports.set(id, transport);
			},
		});
		transport.onclose = () => {
			if (transport.sessionId) transports.delete(transport.sessionId);
		};
		await newServer().connect(transport);
		return transport.handleRequest(req);
	},
});
process.stdout.write(`${http.port}\n`);
