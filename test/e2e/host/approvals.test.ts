/**
 * The host's own approval gate applies to remote calls: a host in always-ask mode prompts over rpc
 * (`extension_ui_request` select) for a remote bash; the answer on its stdin decides the call.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, type RpcFrame, useSharedHost } from "../../helpers/host.ts";

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

	test("remote dialogs reach the host one at a time; /a2a deny-queue denies the token's shown and waiting ones", async () => {
		const [m1, m2, m3] = [1, 2, 3].map(n => `queue${n}-${crypto.randomUUID()}`) as [string, string, string];
		const first = callTool(host, sid, "bash", { command: `touch ${m1}.txt` }, 501);
		const p1 = await promptFor(m1);
		const second = callTool(host, sid, "bash", { command: `touch ${m2}.txt` }, 502);
		const third = callTool(host, sid, "bash", { command: `touch ${m3}.txt` }, 503);
		await Bun.sleep(1000);
		await host.barrier();
		// Held in the bridge's queue: the host has not opened their dialogs.
		expect(host.frames.filter(f => isSelect(f) && /queue[23]-/.test(String(f.title)))).toEqual([]);
		host.send({ type: "extension_ui_response", id: p1.id, value: "Approve" });
		expect((await first).body.result).toMatchObject({ isError: false });
		const p2 = await promptFor(m2);
		await host.command("/a2a deny-queue owner");
		// The shown dialog is closed by the host itself (rpc `cancel`); the waiting one never opens.
		await host.waitFrame(f => f.type === "extension_ui_request" && f.method === "cancel" && f.targetId === p2.id);
		for (const r of [await second, await third]) {
			expect(r.body.result).toEqual({
				content: [{ type: "text", text: "Tool call denied by user: bash" }],
				isError: true,
			});
		}
		expect(host.notifications().some(n => n.includes("denied 2 approval prompt(s) of token 'owner'"))).toBe(true);
		expect(host.frames.filter(f => isSelect(f) && String(f.title).includes(m3))).toEqual([]);
		expect([m1, m2, m3].map(m => existsSync(join(host.cwd, `${m}.txt`)))).toEqual([true, false, false]);
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
