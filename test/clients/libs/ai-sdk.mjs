// The Vercel AI SDK's MCP client (`@ai-sdk/mcp`, HTTP transport): connect, list, call bash.
import { createMCPClient } from "@ai-sdk/mcp";

const [url, secret, command] = process.argv.slice(2);
const client = await createMCPClient({
	transport: { type: "http", url, headers: { Authorization: `Bearer ${secret}` } },
});
const tools = await client.tools();
const result = await tools.bash.execute({ command }, { toolCallId: "matrix", messages: [] });
console.log(JSON.stringify({ tools: Object.keys(tools).length, isError: result?.isError === true }));
await client.close();
