/**
 * Attack 7 against the real omp host: the approval picture says `tools.approval.bash=prompt: bash prompts on every
 * call, whatever the mode` (and docs/security.md's table: "`tools.approval.<tool>: prompt` (any mode): that tool
 * prompts"), but omp's bash lets a `bash.patterns` allow rule win over a user `prompt` policy: a matching remote
 * bash runs with no dialog. Rule: the picture describes the settings the gate judges by.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { callTool, openSession, type RpcFrame, withHost } from "../../helpers/host.ts";

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

describe("attack 7: a prompt policy beside a bash.patterns allow rule", () => {
	test("P2 the picture says bash prompts on every call; a matching remote bash runs unprompted", async () => {
		const config =
			'tools:\n  approvalMode: write\n  approval:\n    bash: prompt\nbash:\n  patterns:\n    - match: "touch *"\n      approval: allow\n';
		await withHost({ files: { ".omp/agent/config.yml": config } }, async h => {
			const picture = String(
				(
					await h.waitFrame(
						x => x.type === "extension_ui_request" && String(x.message).includes("\nA2A bridge approval picture"),
					)
				).message,
			);
			const claims = /tools\.approval\.bash=prompt: bash prompts on every call, whatever the mode(\n|$)/.test(picture);
			expect(picture).toContain("except a command a bash.patterns allow rule matches");
			const sid = await openSession(h);
			const file = join(h.cwd, `attack7-${crypto.randomUUID()}`);
			await callTool(h, sid, "bash", { command: `touch ${file}` });
			const ranUnasked = (await Bun.file(file).exists()) && !h.frames.some(isSelect);
			// Either the picture does not claim every call prompts, or the call was asked about.
			expect({ claims, ranUnasked }).not.toEqual({ claims: true, ranUnasked: true });
		});
	}, 90_000);
});
