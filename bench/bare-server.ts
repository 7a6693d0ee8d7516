/**
 * The ceiling for bench/mcp.ts: a Bun server that answers the MCP JSON-RPC messages the benchmark
 * sends with no logic at all (no auth, no validation, no session table, no dispatch table). Run as
 * its own process, like the host. Prints its port on stdout.
 */

const SESSION = "bare-session";
const TOOLS = {
	tools: [
		{
			name: "echo",
			description: "Echoes its text",
			inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
		},
	],
};
const INIT = {
	protocolVersion: "2025-11-25",
	capabilities: { tools: { listChanged: false } },
	serverInfo: { name: "bare", version: "0" },
};
const JSON_HEADERS = { "content-type": "application/json" };

const server = Bun.serve({
	hostname: "127.0.0.1",
	port: 0,
	async fetch(req) {
		const msg = (await req.json()) as { id?: unknown; method?: string };
		if (msg.id === undefined) return new Response(null, { status: 202 });
		const result = msg.method === "initialize" ? INIT : msg.method === "tools/list" ? TOOLS : {};
		const headers = msg.method === "initialize" ? { ...JSON_HEADERS, "mcp-session-id": SESSION } : JSON_HEADERS;
		return new Response(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }), { headers });
	},
});
process.stdout.write(`${server.port}\n`);
