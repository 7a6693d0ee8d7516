/**
 * Issue 40: on omp before 18.2.1 (CI's second host, 18.1.16) the approval gate reads the approval settings
 * only from a call's context, and a call with none ran in yolo: measured, a remote `bash` ran with no dialog
 * under `--approval-mode always-ask`. The gate's trial (host fact `approval-gate`) finds this and the bridge
 * then passes Main's settings as the call's context: the host's mode decides again. Second channels: the
 * marker file a call leaves, the host's select frames. Runs only on such a host.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, OMP, openSession, type RpcFrame, rpcPost, withHost } from "../../helpers/host.ts";

/** The host's version from its package.json, beside its cli.js. */
const version = (() => {
	try {
		return String(JSON.parse(readFileSync(join(OMP, "..", "..", "package.json"), "utf8")).version);
	} catch {
		return "";
	}
})();
const [major, minor, patch] = version.split(".").map(Number);
const beforeGateFix = major === 18 && ((minor ?? 0) < 2 || (minor === 2 && (patch ?? 0) < 1));

/** A bash call that leaves a marker; `answer` answers its dialog if one opens. */
async function bashCall(host: Host, answer: "Deny" | "Approve" | null) {
	const sid = await openSession(host);
	const list = await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": sid });
	const names = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(t => t.name);
	expect(names).toContain("bash");
	const marker = `old-${crypto.randomUUID().slice(0, 8)}`;
	const before = host.frames.filter(isSelect).length;
	const pending = callTool(host, sid, "bash", { command: `touch ${marker}` }, 2);
	const isNew = (f: RpcFrame) => isSelect(f) && host.frames.filter(isSelect).indexOf(f) >= before;
	const dialog = answer === null ? null : await host.waitFrame(isNew, 30_000);
	if (dialog) host.send({ type: "extension_ui_response", id: dialog.id, value: answer });
	const r = await pending;
	const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
	return { result, ran: existsSync(join(host.cwd, marker)), dialogs: host.frames.filter(isSelect).length };
}

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

describe.skipIf(!beforeGateFix)(`omp ${version}: a gate that reads the settings only from the call's context`, () => {
	test("always-ask: the bridge's call opens the host's dialog; Deny -> not run; Approve -> runs", async () => {
		await withHost({ args: ["--approval-mode", "always-ask"] }, async host => {
			const denied = await bashCall(host, "Deny");
			expect({ error: denied.result.isError, ran: denied.ran, dialogs: denied.dialogs }).toEqual({
				error: true,
				ran: false,
				dialogs: 1,
			});
			const approved = await bashCall(host, "Approve");
			expect({ error: approved.result.isError, ran: approved.ran }).toEqual({ error: false, ran: true });
			expect(host.stderr).not.toContain("host fact 'approval-gate' missing");
		});
	}, 90_000);

	test("yolo (omp's default): the call runs with no dialog, as the host's settings say", async () => {
		await withHost({}, async host => {
			const r = await bashCall(host, null);
			expect({ error: r.result.isError, ran: r.ran, dialogs: r.dialogs }).toEqual({
				error: false,
				ran: true,
				dialogs: 0,
			});
		});
	}, 90_000);
});
