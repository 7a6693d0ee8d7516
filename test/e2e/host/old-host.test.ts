/**
 * Issue 40: on omp before 18.2.1 (CI's second host, 18.1.16) the approval gate reads the approval settings
 * only from a call's context, and a call with none — the way the bridge calls — runs in yolo: measured, a
 * remote `bash` ran with no dialog under `--approval-mode always-ask`. The bridge's gate check (host fact
 * `approval-gate`) refuses every call there and says why; tools are still listed. Second channels: the
 * marker file a call would leave, the host's select frames, host stderr. Runs only on such a host.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, OMP, openSession, rpcPost, withHost } from "../../helpers/host.ts";

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

async function refusedEverywhere(host: Host): Promise<void> {
	const sid = await openSession(host);
	const list = await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": sid });
	const names = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(t => t.name);
	expect(names).toContain("bash");
	const marker = `old-${crypto.randomUUID().slice(0, 8)}`;
	const r = await callTool(host, sid, "bash", { command: `touch ${marker}` }, 2);
	const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
	expect(result.isError).toBe(true);
	expect(result.content[0]?.text).toContain("host fact 'approval-gate'");
	expect(existsSync(join(host.cwd, marker))).toBe(false);
	expect(host.frames.filter(f => f.type === "extension_ui_request" && f.method === "select")).toEqual([]);
	expect(host.stderr).toContain("host fact 'approval-gate' missing (");
}

describe.skipIf(!beforeGateFix)(`omp ${version}: a gate that runs a bridge call in yolo`, () => {
	test("always-ask: tools are listed, a bash call is refused naming approval-gate, nothing ran, no dialog", async () => {
		await withHost({ args: ["--approval-mode", "always-ask"] }, refusedEverywhere);
	}, 90_000);

	test("yolo (omp's default): refused the same way, since the gate ignores the settings either way", async () => {
		await withHost({}, refusedEverywhere);
	}, 90_000);
});
