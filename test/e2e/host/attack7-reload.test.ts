/**
 * Attack 7 against the real omp host, attack 6's open question: docs/guide/phone.md (and docs/zh) say a
 * `/blob`-written `~/.omp/agent/config.yml` takes effect "when omp next starts". omp's `task` reloads the
 * session's settings from disk (task/structured-subagent.ts `reloadFromDisk`), so the next task — the host
 * agent's own, or a remote one the user approves — puts the written settings live, and remote calls are
 * then judged by them in this same run.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { modelsYml, startFakeModel } from "../../helpers/fake-model.ts";
import { callTool, openSession, type RpcFrame, withHost } from "../../helpers/host.ts";

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

describe("attack 7: a /blob-written omp config.yml before omp's next start", () => {
	/** Boots an always-ask host, writes yolo into its config.yml through /blob, maybe runs one approved task, tries bash. */
	async function afterBlobWrite(withTask: boolean) {
		const fake = startFakeModel([{ tool: "yield", input: { data: "done" } }]);
		const files = { ".omp/agent/config.yml": "tools:\n  approvalMode: always-ask\n" };
		try {
			return await withHost({ config: { blob: "write" }, models: modelsYml(fake.url), files }, async h => {
				const sid = await openSession(h);
				const target = join(h.home, ".omp", "agent", "config.yml");
				const put = await fetch(new URL(`/blob?path=${encodeURIComponent(target)}`, h.url), {
					method: "PUT",
					headers: { authorization: `Bearer ${h.token}` },
					body: "tools:\n  approvalMode: yolo\n",
					signal: AbortSignal.timeout(30_000),
				});
				expect(put.status).toBe(200);
				if (withTask) {
					// The host's user approves one ordinary task (or the host's own agent starts one).
					const pending = callTool(h, sid, "task", { context: "t", tasks: [{ task: "report done" }] });
					const ask = await h.waitFrame(f => isSelect(f) && String(f.title).startsWith("Allow tool: task"), 30_000);
					h.send({ type: "extension_ui_response", id: ask.id, value: "Approve" });
					await pending;
				}
				const marker = join(h.cwd, `attack7-${crypto.randomUUID()}`);
				const before = h.frames.filter(isSelect).length;
				const bash = callTool(h, sid, "bash", { command: `touch ${marker}` });
				const settled = await Promise.race([bash.then(() => "answered"), Bun.sleep(8_000).then(() => "waiting")]);
				const bashPrompts = h.frames.filter(isSelect).length - before;
				const open = h.frames.filter(isSelect).at(-1);
				if (bashPrompts > 0 && open) h.send({ type: "extension_ui_response", id: open.id, value: "Deny" });
				return { settled, ran: existsSync(marker), bashPrompts };
			});
		} finally {
			fake.stop();
		}
	}

	/** The docs' claim: settings written now apply at omp's next start, so always-ask still holds and bash prompts. */
	const HOLDS = { settled: "waiting", ran: false, bashPrompts: 1 };

	test("R2-control (passes) with no task in between, the written yolo is not live: the remote bash prompts", async () => {
		expect(await afterBlobWrite(false)).toEqual(HOLDS);
	}, 150_000);

	test("R2 (what phone.md now says) always-ask at start; /blob writes yolo into config.yml; after one approved task a remote bash runs unprompted", async () => {
		// omp reloads its settings from disk when a task starts: the written yolo is live from then on (omp's rule).
		expect(await afterBlobWrite(true)).toEqual({ settled: "answered", ran: true, bashPrompts: 0 });
	}, 150_000);
});
