/**
 * Issue 38 finding 9 against the real host (omp 18.2.3 over rpc): a remote `task` call's subagent runs
 * in yolo mode with no UI of its own (omp task/executor.ts), so the `task` prompt is the one that
 * authorizes what the subagent runs. Its title shows every key of `tasks` (the assignment whole), and
 * no second prompt appears for the subagent's `bash`. A subagent prompt that does reach a dialog is
 * titled with its own tool (unit test `prompt-text.test.ts`, finding 9). Second channel: the file
 * the subagent's command leaves.
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
});
