/**
 * The approval picture and the remote-call label against the real host (contract §14): the start
 * notification and `/a2a` say the host's live approval mode, per-tool policies and the `/blob` switch;
 * a prompt for a remote call is preceded by a notification naming the call's token and client.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
	callTool,
	type Host,
	openSession,
	ROOT,
	type RpcFrame,
	rpcPost,
	useSharedHost,
	withHost,
} from "../../helpers/host.ts";

const CI = `ci-${"c".repeat(40)}`;
const SETTINGS_EXT = join(ROOT, "test", "fixtures", "settings-ext.ts");

let host: Host;
useSharedHost(
	{
		config: { tokens: [{ name: "ci", token: CI }], blob: "read" },
		args: ["--approval-mode", "always-ask", "-e", SETTINGS_EXT],
	},
	h => ({ host } = h),
);

async function status(): Promise<string> {
	const before = host.notifications().length;
	await host.command("/a2a");
	const found = host
		.notifications()
		.slice(before)
		.find(m => m.startsWith("A2A bridge:"));
	if (!found) throw new Error("no /a2a status");
	return found;
}

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

describe("approval picture (real host, always-ask, blob read)", () => {
	test("start notification -> mode and blob in plain words", async () => {
		const f = await host.waitFrame(
			x => x.type === "extension_ui_request" && String(x.message).includes("\nA2A bridge approval picture"),
		);
		const text = String(f.message);
		// One notification carries the URL, the token prefix and the picture: the TUI shows only the latest.
		expect(text.split("\n")[0]).toBe(`A2A bridge listening on ${host.url} (token ${host.token.slice(0, 6)}…)`);
		const bridgeNotes = host.notifications().filter(m => m.startsWith("A2A bridge"));
		expect(bridgeNotes).toEqual([text]);
		expect(text).toContain("approvals: always-ask: tools of the host's read tier run; every other tool prompts");
		// From the host's own tiers, not a list kept in the bridge: more than read, grep and glob.
		expect(text).toContain(
			"runs without a prompt (the host's own tiers, live settings): read, glob, grep, todo, web_search;",
		);
		expect(text).toContain("--approvals (deny refuses at once)");
		expect(text).toContain("blob=read: /blob downloads");
	}, 30_000);

	test("/a2a follows a live settings change (mode and per-tool policy)", async () => {
		expect(await status()).toContain("approvals: always-ask");
		await host.command('/test-set tools.approval {"bash":"deny","read":"Prompt"}');
		// `--approval-mode` is an override: a plain set underneath it changes nothing, and the picture agrees.
		await host.command('/test-set tools.approvalMode "yolo"');
		expect(await status()).toContain("approvals: always-ask");
		await host.command('/test-override tools.approvalMode "yolo"');
		try {
			const text = await status();
			expect(text).toContain("approvals: yolo: remote calls run every tool without a prompt");
			expect(text).toContain("tools.approval.bash=deny: bash refused to every caller");
			expect(text).toContain("tools.approval.read=prompt: read prompts on every call");
		} finally {
			await host.command("/test-set tools.approval {}");
			await host.command('/test-override tools.approvalMode "always-ask"');
		}
		expect(await status()).not.toContain("tools.approval.bash=");
	}, 60_000);

	test("a remote call's prompt names its token and client, and a notification precedes it", async () => {
		const init = await rpcPost(
			host,
			{
				jsonrpc: "2.0",
				id: 0,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "label\u001b[31m-client" } },
			},
			{ authorization: `Bearer ${CI}` },
		);
		const sid = init.headers.get("mcp-session-id") ?? "";
		await init.text();
		const marker = `label-${crypto.randomUUID()}`;
		const pending = rpcPost(
			host,
			{
				jsonrpc: "2.0",
				id: 1,
				method: "tools/call",
				params: { name: "bash", arguments: { command: `echo ${marker}` } },
			},
			{ authorization: `Bearer ${CI}`, "mcp-session-id": sid },
		);
		const prompt = await host.waitFrame(f => isSelect(f) && String(f.title).includes(marker), 20_000);
		const i = host.frames.indexOf(prompt);
		const label = host.frames
			.slice(0, i)
			.reverse()
			.find(f => f.type === "extension_ui_request" && f.method === "notify");
		// The escape sequence a client sends in its name never reaches the host's screen.
		expect(String(label?.message)).toBe("A2A remote call: bash — token ci, client label [31m-client awaits approval");
		// And the dialog itself ends with the label (the bridge's select wrapper).
		expect(String(prompt.title)).toEndWith("\nRemote call (A2A): token ci, client label [31m-client");
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
		const body = (await (await pending).json()) as { result: { isError: boolean } };
		expect(body.result.isError).toBe(true);
	}, 60_000);
});

describe("bash.patterns in the picture (issue 20 item 6)", () => {
	test("an allow rule is named, and a matching remote bash really runs without a prompt in always-ask", async () => {
		const config =
			'tools:\n  approvalMode: always-ask\nbash:\n  patterns:\n    - match: "touch *"\n      approval: allow\n    - match: "rm *"\n      approval: deny\n';
		await withHost({ files: { ".omp/agent/config.yml": config } }, async h => {
			const picture = String(
				(
					await h.waitFrame(
						x => x.type === "extension_ui_request" && String(x.message).includes("\nA2A bridge approval picture"),
					)
				).message,
			);
			expect(picture).toContain("bash.patterns[0] allow 'touch *': a remote bash whose whole command matches");
			expect(picture).toContain("runs WITHOUT a prompt in every mode");
			expect(picture).toContain("bash.patterns[1] deny 'rm *': a remote bash with any segment matching is refused");
			const sid = await openSession(h);
			const file = join(h.cwd, `unprompted-${crypto.randomUUID()}`);
			const r = await callTool(h, sid, "bash", { command: `touch ${file}` });
			expect((r.body.result as { isError: boolean }).isError).toBe(false);
			expect(await Bun.file(file).exists()).toBe(true);
			expect(h.frames.some(isSelect)).toBe(false);
		});
	}, 60_000);
});

describe("the README's TUI variant: deny entries in ~/.omp/agent/config.yml", () => {
	test("a denied tool is refused without a prompt, and the picture names the entry", async () => {
		const config = "tools:\n  approvalMode: always-ask\n  approval:\n    bash: deny\n    write: deny\n    edit: deny\n";
		await withHost({ files: { ".omp/agent/config.yml": config } }, async h => {
			const picture = await h.waitFrame(
				x => x.type === "extension_ui_request" && String(x.message).includes("\nA2A bridge approval picture"),
			);
			expect(String(picture.message)).toContain("approvals: always-ask");
			expect(String(picture.message)).toContain("tools.approval.bash=deny: bash refused to every caller");
			const sid = await openSession(h);
			const r = await callTool(h, sid, "bash", { command: "echo never" });
			const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
			expect(result.isError).toBe(true);
			expect(result.content[0]?.text).toContain('Tool "bash" is blocked by user policy');
			expect(h.frames.some(isSelect)).toBe(false);
		});
	}, 60_000);
});
