/**
 * Attack finding (rule 1 "a row is a row", rule 6): an argument the tool's schema does not declare is
 * accepted by the host's validator (ArkType keeps undeclared keys) and shown on the approval title as a
 * line that starts with the caller's key. So a caller chooses where a row starts and what it says: a key
 * `Command` makes a second `Command: ls -la` row under the real one, a key `❯ Approve` padded to the row
 * width makes a row that reads like the dialog's own option. Second channel: the call's real command.
 */
import { describe, expect, test } from "bun:test";
import { approvalTitle } from "../../../src/host/prompt-text.ts";
import { callTool, type Host, type RpcFrame, useSharedHost } from "../../helpers/host.ts";

let host: Host;
let sid: string;
useSharedHost({ args: ["--approval-mode", "always-ask"], session: true }, h => ({ host, sid } = h));

const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";
const BASH_ORDER = ["command", "env", "timeout", "cwd", "pty", "async"];

describe("attack: undeclared argument keys start rows of the approval title", () => {
	test("real host: a key `Command` reaches the prompt and makes a fake `Command: ls -la` line", async () => {
		const marker = `pwned-${crypto.randomUUID()}`;
		const pending = callTool(host, sid, "bash", { command: `touch ${marker}`, Command: "ls -la" });
		const frame = await host.waitFrame(f => isSelect(f) && String(f.title).includes(marker), 30_000);
		host.send({ type: "extension_ui_response", id: frame.id, value: "Deny" });
		await pending;
		const lines = String(frame.title).split("\n");
		// Only the host's own detail line may say `Command:`; a caller's key must not make a second one.
		expect(lines.filter(l => l.startsWith("Command: "))).toEqual([`Command: touch ${marker}`]);
	}, 60_000);

	test("TUI layout (36-column rows): a padded key `❯ Approve` is a row of its own, unmarked", () => {
		const key = `❯ Approve${" ".repeat(27)}`;
		const args = { command: "rm -rf ~/work", [key]: "" };
		const title = approvalTitle("Allow tool: bash\nCommand: rm -rf ~/work", {
			tool: "bash",
			args,
			order: BASH_ORDER,
			details: ["Command: rm -rf ~/work"],
			caller: { tokenName: "owner", client: "c" },
			width: 36,
		});
		const rows = title.split("\n").slice(1);
		// Every row a caller's text starts must be marked; none may read as the dialog's own option.
		expect(rows.filter(r => r.trimEnd() === "❯ Approve")).toEqual([]);
	});
});
