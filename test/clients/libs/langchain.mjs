// LangChain's MCP adapters (`@langchain/mcp-adapters`, streamable HTTP): connect, list, call bash.
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const [url, secret, command] = process.argv.slice(2);
const client = new MultiServerMCPClient({
	mcpServers: { omp_host: { transport: "http", url, headers: { Authorization: `Bearer ${secret}` } } },
	useStandardContentBlocks: true,
});
const tools = await client.getTools();
const bash = tools.find(t => t.name.endsWith("bash"));
const out = await bash.invoke({ command });
console.log(JSON.stringify({ tools: tools.length, isError: false, out: String(out).slice(0, 80) }));
await client.close();
