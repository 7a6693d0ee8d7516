// The TypeScript SDK 2 client (`@modelcontextprotocol/client`) with `versionNegotiation: {mode: "auto"}`:
// connect, list, call bash. Argv: URL SECRET COMMAND. Prints one JSON line.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, secret, command] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
	requestInit: { headers: { Authorization: `Bearer ${secret}` } },
});
const client = new Client({ name: "matrix-ts-sdk2", version: "1" }, { versionNegotiation: { mode: "auto" } });
await client.connect(transport);
const { tools } = await client.listTools();
const result = await client.callTool({ name: "bash", arguments: { command } });
console.log(JSON.stringify({ tools: tools.length, isError: result.isError === true }));
await client.close();
