/**
 * Revocation reaches a pending approval prompt (issue 38 item 3): a call of a token revoked while the host
 * asks about it is cancelled through the one registry of what tokens hold, and the call's signal closes the
 * host's dialog (src/host/prompt-signal.ts). Second channels: the host's own `cancel` frame for that dialog,
 * the audit's `done` record, and the file the command would have made.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { a2aAnswer, addLiveToken } from "../../helpers/a2a-command.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { modernPost } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("a revoked token's call waiting on a prompt", () => {
	let host: Host;
	useSharedHost({ args: ["--approval-mode", "always-ask"] }, h => ({ host } = h));

	test("revoke while the host asks -> the call ends cancelled, the dialog is closed, approving later runs nothing", async () => {
		const secret = await addLiveToken(host, "asker");
		const marker = `revoked-prompt-${crypto.randomUUID()}`;
		const pending = modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command: `touch ${marker}` } },
			{ headers: { authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(30_000) },
		).then(
			async r => ({ status: r.status, text: await r.text() }),
			(err: unknown) => ({ status: 0, text: String(err) }),
		);
		const prompt = await host.waitFrame(f => f.method === "select" && String(f.title).includes(marker));
		await a2aAnswer(host, "/a2a token revoke asker", m => m.includes("token 'asker' revoked"));
		await host.waitFrame(f => f.method === "cancel" && f.targetId === prompt.id, 10_000);
		const reply = await pending;
		expect(reply.text).not.toContain(`"isError":false`);
		const done = await waitFor(
			"the call's done record",
			() => auditRecords(host, marker).find(r => r.phase === "done"),
			{
				timeoutMs: 10_000,
			},
		);
		expect(done).toMatchObject({ token: "asker", cancelled: true });
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Approve" });
		await Bun.sleep(500);
		expect(existsSync(join(host.cwd, marker))).toBe(false);
	}, 60_000);
});
