/**
 * Attack 6, the real-host half of the unit file's A1-A3: the gate trial only sees a canary that BOTH the mode
 * and its own policy set to prompt, so it cannot tell a gate that honours one of them from omp's. This file
 * holds the rule on the real host (it PASSES on omp 18.2.3 and 18.1.16): a remote call is judged by each of
 * Main's settings on its own — the mode alone (bash, exec tier), a per-tool `prompt` alone (read, read tier in
 * always-ask) and a per-tool `deny` (write) — with the marker file a call leaves as the second channel.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, openSession, type RpcFrame, withHost } from "../../helpers/host.ts";

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

/** Calls `name` with `args`; if `answer` is set, waits for the dialog the call opens and answers it. */
async function judged(host: Host, sid: string, name: string, args: Record<string, unknown>, answer: "Deny" | null) {
	const before = host.frames.filter(isSelect).length;
	const pending = callTool(host, sid, name, args, `${name}-${before}`);
	if (answer !== null) {
		const dialog = await host.waitFrame(f => isSelect(f) && host.frames.filter(isSelect).indexOf(f) >= before, 30_000);
		host.send({ type: "extension_ui_response", id: dialog.id, value: answer });
	}
	const r = await pending;
	const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
	return {
		error: result.isError,
		dialogs: host.frames.filter(isSelect).length - before,
		text: result.content[0]?.text,
	};
}

describe("attack 6: each of Main's settings judges a remote call on its own (real host)", () => {
	test("always-ask + tools.approval { read: prompt, write: deny }: bash asks (mode), read asks (policy), write is refused unasked (deny)", async () => {
		await withHost(
			{
				args: ["--approval-mode", "always-ask"],
				files: { ".omp/agent/config.yml": "tools:\n  approval: { read: prompt, write: deny }\n" },
			},
			async host => {
				const sid = await openSession(host);
				const bash = await judged(host, sid, "bash", { command: "touch a6-bash" }, "Deny");
				const read = await judged(host, sid, "read", { path: "a6-nothing.txt" }, "Deny");
				const write = await judged(host, sid, "write", { path: "a6-write.txt", content: "x" }, null);
				expect({
					bash: [bash.error, bash.dialogs],
					read: [read.error, read.dialogs],
					write: [write.error, write.dialogs],
				}).toEqual({ bash: [true, 1], read: [true, 1], write: [true, 0] });
				expect([existsSync(join(host.cwd, "a6-bash")), existsSync(join(host.cwd, "a6-write.txt"))]).toEqual([
					false,
					false,
				]);
				expect(host.stderr).not.toContain("host fact 'approval-gate' missing");
			},
		);
	}, 120_000);
});
