/**
 * Issue 38 finding 9 and rule 6 against the real host (omp 18.2.3 over rpc). A `task` subagent runs with
 * `tools.approvalMode: yolo` (omp src/task/executor.ts:1000) and `hasUI: false` (executor.ts:3718), so no
 * subagent tool ever reaches a dialog, the bridge's or any: under always-ask its `bash` runs unprompted
 * once the `task` prompt (which shows the assignment whole) is approved; with `tools.approval.bash: prompt`
 * the subagent's wrapper refuses it without a prompt (extensions/wrapper.ts:308-323). The title a
 * subagent prompt would get is unit-tested (`prompt-text.test.ts`, finding 9). Second channels: the file
 * the subagent's command leaves or does not, and the tool result the subagent's model is sent.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { modelsYml, startFakeModel } from "../../helpers/fake-model.ts";
import { callTool, openSession, type RpcFrame, withHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";
const logical = (title: string): string[] => title.replaceAll("\n┆ ", "").split("\n");

describe("what a remote task's subagent runs is on the task's prompt (issue 38 finding 9)", () => {
	test("the task prompt shows the assignment; approved, the subagent's bash runs with no prompt of its own", async () => {
		const marker = `sub-${crypto.randomUUID().slice(0, 8)}`;
		const fake = startFakeModel([
			{ tool: "bash", input: { command: `touch ${marker}` } },
			{ tool: "yield", input: { data: "done" } },
		]);
		try {
			await withHost({ models: modelsYml(fake.url), args: ["--approval-mode", "always-ask"] }, async h => {
				const sid = await openSession(h);
				const assignment = `touch ${marker} (${"x".repeat(300)}) then report`;
				const pending = callTool(h, sid, "task", { context: "test", tasks: [{ task: assignment }] });
				const outer = await h.waitFrame(
					f => isSelect(f) && String(f.title).startsWith("Allow tool: task — remote call (A2A)"),
					30_000,
				);
				const lines = logical(String(outer.title));
				expect(lines).toContain('tasks[0].agent: "task"');
				expect(lines.find(l => l.startsWith("tasks[0].task: "))).toEndWith('then report"');
				h.send({ type: "extension_ui_response", id: outer.id, value: "Approve" });
				await pending;
				await waitFor(`${marker} made by the subagent's bash`, () => existsSync(join(h.cwd, marker)), {
					timeoutMs: 60_000,
				});
				expect(h.frames.filter(f => isSelect(f) && String(f.title).startsWith("Allow tool: bash"))).toEqual([]);
			});
		} finally {
			fake.stop();
		}
	}, 150_000);

	test("with tools.approval.bash: prompt, the subagent's bash is refused with no dialog (omp: no UI in a subagent)", async () => {
		const marker = `nosub-${crypto.randomUUID().slice(0, 8)}`;
		const fake = startFakeModel([
			{ tool: "bash", input: { command: `touch ${marker}` } },
			{ tool: "yield", input: { data: "done" } },
		]);
		const files = { ".omp/agent/config.yml": "tools:\n  approval:\n    bash: prompt\n" };
		try {
			await withHost({ models: modelsYml(fake.url), files, args: ["--approval-mode", "always-ask"] }, async h => {
				const sid = await openSession(h);
				const pending = callTool(h, sid, "task", { context: "test", tasks: [{ task: `touch ${marker}` }] });
				const outer = await h.waitFrame(
					f => isSelect(f) && String(f.title).startsWith("Allow tool: task — remote call (A2A)"),
					30_000,
				);
				h.send({ type: "extension_ui_response", id: outer.id, value: "Approve" });
				await pending;
				const refused = "requires approval but no interactive UI available";
				await waitFor("the subagent's model sent the refusal", () => JSON.stringify(fake.requests).includes(refused), {
					timeoutMs: 60_000,
				});
				expect(existsSync(join(h.cwd, marker))).toBe(false);
				// The only dialog of the whole run was the task's: none for bash, bridge-titled or not.
				expect(h.frames.filter(isSelect).map(f => String(f.title).split("\n")[0])).toEqual([
					String(outer.title).split("\n")[0],
				]);
			});
		} finally {
			fake.stop();
		}
	}, 150_000);
});
