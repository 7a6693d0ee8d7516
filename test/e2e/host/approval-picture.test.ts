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
		// From the host's own tiers, not a list kept in the bridge: more than read, grep and glob, and the
		// actions of tools whose tier depends on their arguments (issue 30 defect 9: hub's were missing).
		expect(text).toContain("runs without a prompt (the host's own tiers, live settings): read, debug (action ");
		expect(text).toContain(
			", hub (op send (with name: may prompt), wait, inbox, list, jobs, cancel, ps, logs, describe), todo, web_search;",
		);
		expect(text).toMatch(/, lsp \(action [a-z_, ]*status[a-z_, ]*\), /);
		expect(text).toContain("--approvals (deny refuses at once)");
		expect(text).toContain("blob=read: /blob downloads");
	}, 30_000);

	test("issue 30 defect 9: every hub action the picture names runs without a prompt; those it leaves out prompt", async () => {
		const f = await host.waitFrame(
			x => x.type === "extension_ui_request" && String(x.message).includes("\nA2A bridge approval picture"),
		);
		const named = /, hub \(op (.*?)\), todo/.exec(String(f.message))?.[1] ?? "";
		const open = named.split(", ").map(op => op.split(" ")[0] ?? "");
		expect(open).toEqual(["send", "wait", "inbox", "list", "jobs", "cancel", "ps", "logs", "describe"]);
		const sid = await openSession(host);
		const minimal: Record<string, Record<string, unknown>> = {
			send: { to: "Main", message: "hello" },
			wait: { timeout: 1 },
			cancel: { ids: ["none"] },
			logs: { name: "none" },
			describe: { name: "none" },
		};
		for (const op of open) {
			const before = host.frames.filter(isSelect).length;
			const r = await callTool(host, sid, "hub", { op, ...minimal[op] });
			// It ran (a result from the tool, an error of its own at most) and no prompt was opened.
			expect(r.body.result).toBeDefined();
			expect({ op, prompts: host.frames.filter(isSelect).length - before }).toEqual({ op, prompts: 0 });
		}
		// Not named: a prompt (denied here). `send` with a process name is the "may prompt" the picture says.
		const name = `nosuch${crypto.randomUUID().slice(0, 8)}`;
		for (const args of [
			{ op: "start", name, application: "/bin/true" },
			{ op: "stop", name },
			{ op: "send", name, text: "x" },
		]) {
			const pending = callTool(host, sid, "hub", args);
			const prompt = await host.waitFrame(
				x => isSelect(x) && String(x.title).includes(`op: ${args.op}, name: ${name}`),
			);
			host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
			expect(((await pending).body.result as { isError: boolean }).isError).toBe(true);
		}
	}, 90_000);

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
