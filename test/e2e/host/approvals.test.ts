/**
 * The host's own approval gate applies to remote calls: a host in always-ask mode prompts over rpc
 * (`extension_ui_request` select) for a remote bash; the answer on its stdin decides the call.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, type RpcFrame, rpcPost, useSharedHost } from "../../helpers/host.ts";

let host: Host;
let sid: string;

useSharedHost({ args: ["--approval-mode", "always-ask"], session: true }, h => ({ host, sid } = h));

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

async function promptFor(marker: string): Promise<RpcFrame> {
	return host.waitFrame(f => isSelect(f) && String(f.title).includes(marker), 20_000);
}

describe("approval gate (always-ask)", () => {
	test("Deny -> isError with the denial text, and the command did not run", async () => {
		const marker = `deny-${crypto.randomUUID()}`;
		const pending = callTool(host, sid, "bash", { command: `touch ${marker}.txt` });
		const prompt = await promptFor(marker);
		expect(prompt.options).toEqual(["Approve", "Deny"]);
		expect(String(prompt.title)).toContain("Allow tool: bash");
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
		const r = await pending;
		const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
		expect(result.isError).toBe(true);
		expect(result.content[0]?.text).toContain("denied");
		expect(existsSync(join(host.cwd, `${marker}.txt`))).toBe(false);
	}, 60_000);

	test("Approve -> the command runs", async () => {
		const marker = `approve-${crypto.randomUUID()}`;
		const pending = callTool(host, sid, "bash", { command: `touch ${marker}.txt && echo made-${marker}` });
		const prompt = await promptFor(marker);
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Approve" });
		const r = await pending;
		const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
		expect(result.isError).toBe(false);
		expect(result.content[0]?.text).toContain(`made-${marker}`);
		expect(existsSync(join(host.cwd, `${marker}.txt`))).toBe(true);
	}, 60_000);

	test("read is answered without a prompt", async () => {
		const file = join(host.cwd, "no-prompt.txt");
		writeFileSync(file, "quiet\n");
		const before = host.frames.filter(isSelect).length;
		const r = await callTool(host, sid, "read", { path: file });
		const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
		expect(result.isError).toBe(false);
		expect(result.content[0]?.text).toContain("quiet");
		expect(host.frames.filter(isSelect).length).toBe(before);
	}, 60_000);
});

describe("running work counts (contract §15)", () => {
	const status = async (): Promise<string> => {
		const before = host.notifications().length;
		await host.command("/a2a");
		return (
			host
				.notifications()
				.slice(before)
				.find(m => m.startsWith("A2A bridge: http")) ?? ""
		);
	};

	test("a cancelled call still waiting for approval keeps its slot, shown in /a2a, until the prompt is answered", async () => {
		const marker = `slot-${crypto.randomUUID()}`;
		const pending = callTool(host, sid, "bash", { command: `echo ${marker}` }, 41);
		const prompt = await promptFor(marker);
		const ack = await rpcPost(
			host,
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 41 } },
			{ "mcp-session-id": sid },
		);
		expect(ack.status).toBe(202);
		expect((await pending).body.error).toEqual({ code: -32800, message: "request cancelled" });
		expect(await status()).toMatch(/calls in flight: 1 — bash \(\d+ s, cancelled, still stopping\)/);
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
		const deadline = Date.now() + 20_000;
		let text = await status();
		while (!text.includes("calls in flight: 0") && Date.now() < deadline) text = await status();
		expect(text).toContain("calls in flight: 0");
	}, 60_000);

	test("a caller that disconnects without cancelling -> the call waits on, /a2a marks it abandoned", async () => {
		const marker = `gone-${crypto.randomUUID()}`;
		const gone = new AbortController();
		const request = fetch(new URL("/", host.url), {
			method: "POST",
			headers: host.headers({ "mcp-session-id": sid }),
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 43,
				method: "tools/call",
				params: { name: "bash", arguments: { command: `echo ${marker}` } },
			}),
			signal: gone.signal,
		}).catch(() => null);
		const prompt = await promptFor(marker);
		gone.abort();
		await request;
		const deadline = Date.now() + 20_000;
		let text = await status();
		while (!text.includes("abandoned by its caller") && Date.now() < deadline) text = await status();
		expect(text).toMatch(/bash \(\d+ s, abandoned by its caller\)/);
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
	}, 60_000);
});
