import { describe, expect, test } from "bun:test";
import { DEFAULT_APPROVAL_QUEUE, parseHostArgs, USAGE } from "../../../src/headless/args.ts";
import { Approver } from "../../../src/headless/cli.ts";
import type { ApprovalPrompt } from "../../../src/headless/frames.ts";
import { DENY_QUEUE, queueEnv, readDenyQueue } from "../../../src/headless/queue-command.ts";

/** Terminal input the test feeds line by line. */
function terminal() {
	const lines: string[] = [];
	let wake: (() => void) | undefined;
	return {
		push(text: string) {
			lines.push(text);
			wake?.();
		},
		async *[Symbol.asyncIterator]() {
			for (;;) {
				const next = lines.shift();
				if (next !== undefined) yield next;
				else await new Promise<void>(r => (wake = r));
			}
		},
	};
}
const tick = () => new Promise(r => setTimeout(r, 0));
const prompt = (id: string, token: string): ApprovalPrompt => ({
	id,
	tool: "bash",
	start: `Command: touch ${id}`,
	details: [`Command: touch ${id}`],
	caller: { tokenName: token, client: null },
});

function setup() {
	const input = terminal();
	const sent: string[] = [];
	let screen = "";
	const approver = new Approver({
		mode: "ask",
		timeoutMs: 60_000,
		input,
		output: { write: t => (screen += t) },
		denyQueue: token => sent.push(token),
	});
	return { approver, input, sent, screen: () => screen };
}

describe("deny-queue NAME on the headless host's terminal (issue 38 item 7)", () => {
	test("reads the command; malformed names and other lines are not it", () => {
		expect(readDenyQueue("deny-queue ci")).toBe("ci");
		expect(readDenyQueue("  DENY-QUEUE ci  ")).toBe("ci");
		for (const bad of [
			"deny-queue",
			"deny-queue a b",
			"deny-queue A",
			"deny-queue ../x",
			`deny-queue ${"x".repeat(33)}`,
		])
			expect(readDenyQueue(bad)).toBe("");
		for (const other of ["y", "n", "deny", "deny-queues x", ""]) expect(readDenyQueue(other)).toBeUndefined();
	});

	test("typed with no prompt shown: reaches the bridge's queue (a denial counts whenever typed)", async () => {
		const s = setup();
		s.input.push(`${DENY_QUEUE} ci\n`);
		await tick();
		expect(s.sent).toEqual(["ci"]);
	});

	test("the prompt on screen of that token is denied, another token's next prompt then shows and is untouched", async () => {
		const s = setup();
		const a1 = s.approver.decide(prompt("a1", "ci"));
		const b1 = s.approver.decide(prompt("b1", "laptop"));
		const a2 = s.approver.decide(prompt("a2", "ci"));
		s.input.push("deny-queue ci\n");
		expect(await a1).toEqual({ value: "Deny", reason: "deny-queue ci on the terminal" });
		expect(await a2).toEqual({ value: "Deny", reason: "deny-queue ci on the terminal" });
		expect(s.sent).toEqual(["ci"]);
		await tick();
		expect(s.screen()).toContain("Command: touch b1");
		s.input.push("y\n");
		expect((await b1).value).toBe("Approve");
	});

	test("a malformed command is said, sends nothing and answers nothing", async () => {
		const s = setup();
		const a1 = s.approver.decide(prompt("a1", "ci"));
		s.input.push("deny-queue ci laptop\n");
		await tick();
		expect(s.sent).toEqual([]);
		expect(s.screen()).toContain('(type "deny-queue NAME")');
		s.input.push("n\n");
		expect((await a1).reason).toBe("answered on the terminal");
	});

	test("--approval-queue: bounds and hostile values; the environment handed to omp", () => {
		const plain = parseHostArgs([], false);
		expect(plain.ok && plain.value.approvalQueue).toBe(DEFAULT_APPROVAL_QUEUE);
		expect(USAGE).toContain(`waiting for their turn (default ${DEFAULT_APPROVAL_QUEUE})`);
		const ok = parseHostArgs(["--approval-queue=7", "--approval-timeout", "90"], false);
		expect(ok.ok && queueEnv(ok.value)).toEqual({ A2A_BRIDGE_APPROVAL_QUEUE: "7", A2A_BRIDGE_APPROVAL_WAIT_S: "90" });
		for (const bad of ["0", "257", "-1", "1e1", "x", "3.5", "0x4", "1000"]) {
			const r = parseHostArgs(["--approval-queue", bad], false);
			expect(r.ok ? "accepted" : r.code).toBe("bad_value");
		}
		const missing = parseHostArgs(["--approval-queue"], false);
		expect(missing.ok ? "accepted" : missing.why).toBe("--approval-queue needs a value: a number of prompts");
	});
});
