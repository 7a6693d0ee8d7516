/**
 * Real clients against a real host: the official MCP SDK client, and a second, unmodified omp whose
 * own MCP client is configured through `~/.omp/agent/mcp.json` (host facts §12).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auditRecords } from "../../helpers/audit.ts";
import { Host, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const CALLER_PROBE = join(import.meta.dir, "..", "..", "fixtures", "mcp-caller-ext.ts");

let host: Host;

useSharedHost({}, h => ({ host } = h));

async function sdkClient(token = host.token): Promise<Client> {
	const client = new Client({ name: "a2a-e2e", version: "0.0.0" });
	const transport = new StreamableHTTPClientTransport(new URL(host.url), {
		requestInit: { headers: { Authorization: `Bearer ${token}` } },
	});
	await client.connect(transport);
	return client;
}

describe("official MCP SDK client", () => {
	test("connects, lists the host's tools, reads a file the test wrote, runs bash, gets isError for an unknown tool", async () => {
		const client = await sdkClient();
		try {
			expect(client.getServerVersion()?.name).toBe("omp-a2a-bridge");
			const { tools } = await client.listTools();
			const names = tools.map(t => t.name);
			for (const n of ["read", "bash", "edit", "write"]) expect(names).toContain(n);

			const nonce = crypto.randomUUID();
			const file = join(host.cwd, "sdk-read.txt");
			writeFileSync(file, `alpha\n${nonce}\nomega\n`);
			const read = await client.callTool({ name: "read", arguments: { path: file } });
			expect(read.isError).toBe(false);
			const readText = (read.content as Array<{ type: string; text: string }>).map(c => c.text).join("\n");
			expect(readText).toContain(nonce);
			expect(readText).toContain("alpha");

			const echoNonce = crypto.randomUUID();
			const bash = await client.callTool({
				name: "bash",
				arguments: { command: `echo ${echoNonce} > out.txt; cat out.txt` },
			});
			expect(bash.isError).toBe(false);
			expect(JSON.stringify(bash.content)).toContain(echoNonce);
			// Second channel: the command really ran in the host's working directory.
			expect(readFileSync(join(host.cwd, "out.txt"), "utf8").trim()).toBe(echoNonce);

			const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
			expect(unknown.isError).toBe(true);
			expect(unknown.content).toEqual([{ type: "text", text: "tool 'no_such_tool' is not exposed by this bridge" }]);

			const alias = await client.callTool({ name: "xd://bash", arguments: { command: "echo x" } });
			expect(alias.isError).toBe(true);
		} finally {
			await client.close();
		}
	}, 60_000);

	test("a wrong token is refused at connect", async () => {
		await expect(sdkClient("w".repeat(43))).rejects.toThrow(/401|unauthorized/i);
	}, 30_000);

	test("a failing command comes back as isError with the host's text", async () => {
		const client = await sdkClient();
		try {
			const r = await client.callTool({ name: "bash", arguments: { command: "exit 3" } });
			expect(r.isError).toBe(true);
			expect(JSON.stringify(r.content)).toContain("code 3");
		} finally {
			await client.close();
		}
	}, 60_000);
});

describe("a second, unmodified omp as the remote caller", () => {
	test("its MCP client connects through mcp.json, sees the bridge's tools and runs one real call", async () => {
		const nonce = crypto.randomUUID();
		const mcpJson = {
			mcpServers: {
				"omp-host": {
					type: "http",
					url: host.url,
					headers: { Authorization: `Bearer ${host.token}` },
					timeout: 0,
				},
			},
		};
		const caller = await Host.start({
			config: null,
			bridge: false,
			files: { ".omp/agent/mcp.json": JSON.stringify(mcpJson) },
			args: ["-e", CALLER_PROBE],
			env: { A2A_CALLER_NONCE: nonce },
		});
		try {
			await waitFor("the caller's CALLER done", () => caller.stderr.includes("CALLER done"), {
				timeoutMs: 45_000,
				seen: () => caller.stderr,
			});
			const tools = /CALLER tools (.*)/.exec(caller.stderr)?.[1] ?? "";
			expect(tools).toContain("mcp__omp_host_read");
			expect(tools).toContain("mcp__omp_host_bash");
			expect(caller.stderr).toContain(`CALLER result ${nonce}`);
			// Second channel: the command ran on the bridge host, which wrote the nonce into its cwd.
			expect(readFileSync(join(host.cwd, "caller-nonce.txt"), "utf8").trim()).toBe(nonce);
		} finally {
			await caller.stop();
			caller.cleanup();
		}
	}, 90_000);

	/** A caller omp whose MCP client runs `command` once on the host, with omp's per-call `timeout` (ms). */
	const callerRunning = (command: string, timeout: number) =>
		Host.start({
			config: null,
			bridge: false,
			files: {
				".omp/agent/mcp.json": JSON.stringify({
					mcpServers: {
						"omp-host": { type: "http", url: host.url, headers: { Authorization: `Bearer ${host.token}` }, timeout },
					},
				}),
			},
			args: ["-e", CALLER_PROBE],
			// A nonce the answer never holds, so the probe prints the whole answer.
			env: { A2A_CALLER_COMMAND: command, A2A_CALLER_NONCE: crypto.randomUUID() },
		});
	const records = () => auditRecords<{ phase: string; args: string; cancelled?: boolean; isError?: boolean }>(host);

	test("when its per-call timeout runs out, it stops waiting but the call runs on to its end in the host", async () => {
		const marker = `slow-${crypto.randomUUID()}`;
		const caller = await callerRunning(`sleep 4; echo ${marker} > ${marker}.txt`, 1500);
		try {
			await waitFor("the caller's CALLER done", () => caller.stderr.includes("CALLER done"), {
				timeoutMs: 30_000,
				seen: () => caller.stderr,
			});
			expect(caller.stderr).toContain("message: Request timeout after 1500ms");
			const done = await waitFor(
				"the call's done record",
				() => records().find(r => r.phase === "done" && r.args.includes(marker)),
				{ timeoutMs: 15_000 },
			);
			expect(done).toMatchObject({ isError: false });
			expect(done?.cancelled).toBeUndefined();
			expect(readFileSync(join(host.cwd, `${marker}.txt`), "utf8").trim()).toBe(marker);
		} finally {
			await caller.stop();
			caller.cleanup();
		}
	}, 90_000);

	test("when that omp exits mid-call, its session DELETE cancels the call: the command is killed", async () => {
		const marker = `late-${crypto.randomUUID()}`;
		const caller = await callerRunning(`sleep 20; echo ${marker} > ${marker}.txt`, 0);
		try {
			await waitFor(
				"the call's start record",
				() => records().find(r => r.phase === "start" && r.args.includes(marker)),
				{
					timeoutMs: 45_000,
					seen: () => caller.stderr,
				},
			);
		} finally {
			// Closing stdin is omp's own clean shutdown, the path where its MCP client DELETEs its session.
			expect(await caller.stop()).toBe(0);
			caller.cleanup();
		}
		const done = await waitFor(
			"the call's done record",
			() => records().find(r => r.phase === "done" && r.args.includes(marker)),
			{ timeoutMs: 10_000 },
		);
		expect(done).toMatchObject({ cancelled: true });
		expect(existsSync(join(host.cwd, `${marker}.txt`))).toBe(false);
	}, 90_000);
});
