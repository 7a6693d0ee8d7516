import { describe, expect, test } from "bun:test";
import { Approver } from "../../../src/headless/cli.ts";
import { parseApprovalPicture } from "../../../src/headless/frames.ts";
import { LabelQueue, MAX_PENDING_LABELS } from "../../../src/headless/labels.ts";
import { describeAnswerer, describeDecision } from "../../../src/headless/prompt-screen.ts";
import { callerLabel } from "../../../src/host/remote-calls.ts";

describe("LabelQueue", () => {
	test("a label is consumed (not printed) and given to the next prompt for its tool", () => {
		const q = new LabelQueue();
		expect(q.offer("host says hello")).toBe(false);
		expect(q.offer(callerLabel("bash", { tokenName: "ci", client: "cc" }))).toBe(true);
		expect(q.offer(callerLabel("write", { tokenName: "bot", client: null }))).toBe(true);
		expect(q.take("write")).toEqual({ tokenName: "bot", client: null });
		expect(q.take("write")).toBe(undefined);
		expect(q.take("bash")).toEqual({ tokenName: "ci", client: "cc" });
	});
	test("an unlabelled prompt (the host's own model) gets no caller", () => {
		expect(new LabelQueue().take("bash")).toBe(undefined);
	});
	test("bounded: the oldest labels are dropped past the limit", () => {
		const q = new LabelQueue();
		for (let i = 0; i <= MAX_PENDING_LABELS; i++) q.offer(callerLabel("bash", { tokenName: `t${i}`, client: null }));
		expect(q.take("bash")?.tokenName).toBe("t1");
	});
});

describe("decision lines name the caller", () => {
	const prompt = {
		id: "1",
		tool: "bash",
		start: "Command: make",
		details: ["Command: make"],
		caller: { tokenName: "ci", client: "cc" },
	};
	test("describeDecision", () => {
		expect(describeDecision(prompt, { value: "Deny", reason: "--approvals deny" })).toBe(
			"approval: bash (Command: make) from token ci, client cc -> Deny (--approvals deny)",
		);
		const { caller: _c, ...bare } = prompt;
		expect(describeDecision(bare, { value: "Deny", reason: "x" })).toBe("approval: bash (Command: make) -> Deny (x)");
	});
	test("the prompt on the terminal (ask mode)", () => {
		let shown = "";
		const input = (async function* () {})();
		const approver = new Approver({ mode: "ask", timeoutMs: 60_000, input, output: { write: t => (shown += t) } });
		void approver.decide(prompt);
		expect(shown).toContain("Approval needed: bash from token ci, client cc");
	});
	test("describeAnswerer per mode", () => {
		expect(describeAnswerer("deny", 60_000)).toContain("Deny at once (--approvals deny)");
		expect(describeAnswerer("approve", 60_000)).toContain("Approve at once");
		expect(describeAnswerer("ask", 30_000)).toContain("Deny after 30 s");
		// Issue 40: this terminal alone answers; omp in rpc mode has no Collab, and the caller cannot answer.
		expect(describeAnswerer("ask", 30_000)).toContain("asked on this terminal and nowhere else");
		expect(describeAnswerer("ask", 30_000)).toContain("omp in rpc mode shares no prompt with Collab");
		expect(describeAnswerer("ask", 30_000)).toContain("nothing the MCP caller sends answers one");
	});
	test("parseApprovalPicture", () => {
		expect(parseApprovalPicture("A2A bridge approval picture (x):\napprovals: yolo\nblob=write")).toEqual([
			"approvals: yolo",
			"blob=write",
		]);
		expect(parseApprovalPicture("A2A bridge listening on http://x/")).toBe(null);
	});
});
