/**
 * Issue 40 item 1 against the real host: the pinned omp (18.2.3, or the second host through A2A_TEST_OMP)
 * holds every host fact the bridge relies on, so stderr has no host-fact line, `/a2a` says they hold, and
 * what the facts carry is served: the catalog, a call, and the takeover switch.
 */
import { describe, expect, test } from "bun:test";
import { FACTS } from "../../../src/host/facts.ts";
import { callTool, type Host, rpcPost, useSharedHost } from "../../helpers/host.ts";

let host: Host;
let sid: string;
useSharedHost({ session: true }, h => ({ host, sid } = h));

describe("host facts on the real host (issue 40 item 1)", () => {
	test("every fact holds: no stderr line, /a2a says so, tools/list, tools/call and /host-llm are served", async () => {
		const before = host.notifications().length;
		await host.command("/a2a");
		const status = host
			.notifications()
			.slice(before)
			.find(m => m.startsWith("A2A bridge:"));
		expect(status).toContain(`host facts: all ${Object.keys(FACTS).length} hold`);
		expect(status).not.toContain("host fact '");
		// Second channel: host stderr, where a missing fact would be named.
		expect(host.stderr).not.toContain("host fact");

		const list = await rpcPost(host, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": sid });
		const tools = ((await list.json()) as { result: { tools: Array<{ name: string; inputSchema: { type: string } }> } })
			.result.tools;
		expect(tools.find(t => t.name === "read")?.inputSchema.type).toBe("object");
		const r = await callTool(host, sid, "read", { path: "/etc/hostname" });
		expect(r.body.error).toBeUndefined();
		expect((r.body.result as { isError?: boolean }).isError).not.toBe(true);

		const hostLlm = `http://127.0.0.1:${host.port}/host-llm`;
		const deny = await fetch(hostLlm, { method: "POST", headers: host.headers(), body: '{"enabled":false}' });
		expect(deny.status).toBe(200);
		const back = await fetch(hostLlm, { method: "POST", headers: host.headers(), body: '{"enabled":true}' });
		expect(((await back.json()) as { enabled: boolean }).enabled).toBe(true);
	}, 60_000);
});
