import { describe, expect, test } from "bun:test";
import { describeApprovals, effectiveMode, effectivePolicies } from "../../../src/host/approvals.ts";

describe("describeApprovals", () => {
	test("yolo -> every tool runs without a prompt", () => {
		const [mode] = describeApprovals("yolo", {}, "write");
		expect(mode).toBe(
			"approvals: yolo: remote calls run every tool without a prompt (only tools.approval deny/prompt entries stop one)",
		);
	});
	test("always-ask -> read tools run, others prompt; --approvals deny refuses them", () => {
		const [mode] = describeApprovals("always-ask", {}, "write");
		expect(mode).toContain("always-ask: read tools (read, grep, glob) run; every other tool prompts");
		expect(mode).toContain("deny refuses at once");
	});
	test("write -> read and write run, exec prompts", () => {
		expect(describeApprovals("write", {}, "write")[0]).toContain("write: read and write tools run; exec tools");
	});
	test("unknown, missing or non-string mode -> read as yolo, as the host does, and said so", () => {
		expect(describeApprovals("paranoid", {}, "off")[0]).toContain("approvals: yolo");
		expect(describeApprovals("paranoid", {}, "off")[0]).toContain("configured 'paranoid' is not a mode");
		expect(describeApprovals(undefined, {}, "off")[0]).toContain("approvals: yolo");
		expect(describeApprovals(42, {}, "off")[0]).toContain("approvals: yolo");
	});
	test("per-tool policies: case-insensitive, sorted, unknown values dropped (the host ignores them)", () => {
		const lines = describeApprovals(
			"yolo",
			{ write: "PROMPT", bash: "deny", read: "allow", edit: "maybe", x: 3 },
			"write",
		);
		expect(lines.slice(1, -1)).toEqual([
			"  tools.approval.bash=deny: bash refused to every caller, before any prompt",
			"  tools.approval.read=allow: read runs without a prompt (unless the tool itself asks, e.g. a critical bash pattern outside yolo)",
			"  tools.approval.write=prompt: write prompts on every call, whatever the mode",
		]);
	});
	test("policies that are not a record -> none", () => {
		for (const raw of [null, undefined, "bash=deny", ["deny"]]) expect(effectivePolicies(raw)).toEqual([]);
	});
	test("blob line per setting", () => {
		expect(describeApprovals("yolo", {}, "write").at(-1)).toContain("blob=write: /blob reads and writes any file");
		expect(describeApprovals("yolo", {}, "read").at(-1)).toContain("uploads get 403");
		expect(describeApprovals("yolo", {}, "off").at(-1)).toBe("blob=off: /blob answers 403 to every request");
	});
	test("effectiveMode keeps the three modes", () => {
		for (const m of ["yolo", "write", "always-ask"]) expect(effectiveMode(m)).toBe(m as never);
	});
});
