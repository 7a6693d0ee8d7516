import { describe, expect, test } from "bun:test";
import { resolveApproval } from "@oh-my-pi/pi-coding-agent/tools/approval";
import { describeApprovals, effectiveMode, effectivePolicies } from "../../../src/host/approvals.ts";
import { bashPatternRules, type ResolveApproval, unprompted } from "../../../src/host/unprompted.ts";
import { hasHidden } from "../../../src/text/show.ts";

const resolve = resolveApproval as unknown as ResolveApproval;
/** Shaped like omp's tools: static tiers, and one whose tier depends on its `action` (like hub, lsp, debug). */
const TOOLS = [
	{ name: "read", approval: "read" },
	{ name: "web_search", approval: "read" },
	{ name: "write", approval: "write" },
	{ name: "bash", approval: () => "exec" },
	{ name: "noTier" },
	{
		name: "hub",
		approval: (a: { action?: string }) => (a.action === "list" || a.action === "send" ? "read" : "exec"),
		parameters: { properties: { action: { anyOf: [{ const: "list" }, { const: "send" }, { const: "kill" }] } } },
	},
	{
		name: "lsp",
		approval: (a: { op?: string }) => (a.op === "rename" ? "write" : "read"),
		parameters: { properties: { op: { enum: ["status", "rename"] } } },
	},
];

describe("unprompted (issue 20 item 6): the host's own resolveApproval over its tools", () => {
	test("always-ask -> read-tier tools and the read-tier actions of per-argument tools", () => {
		expect(unprompted(TOOLS, "always-ask", {}, resolve)).toEqual([
			"read",
			"web_search",
			"hub (action list, send)",
			"lsp (op status)",
		]);
	});
	test("write mode adds write tiers; yolo opens every tool; a deny policy closes one", () => {
		expect(unprompted(TOOLS, "write", {}, resolve)).toEqual([
			"read",
			"web_search",
			"write",
			"hub (action list, send)",
			"lsp",
		]);
		expect(unprompted(TOOLS, "yolo", { bash: "deny" }, resolve)).toEqual([
			"read",
			"web_search",
			"write",
			"noTier",
			"hub",
			"lsp",
		]);
		expect(unprompted(TOOLS, "always-ask", { web_search: "deny", hub: "prompt" }, resolve)).toEqual([
			"read",
			"lsp (op status)",
		]);
	});
	test("issue 30 defect 9: an action that prompts only with some argument says so; one open only with one says that", () => {
		// Shaped like omp 18.2.3's hub: `send` is a peer message (read) unless it names a process without `to`.
		const hub = {
			name: "hub",
			approval: (a: { op?: string; name?: string; to?: string }) =>
				a.op === "send" ? (a.name && !a.to ? "exec" : "read") : a.op === "list" ? "read" : "exec",
			parameters: {
				properties: { op: { enum: ["send", "list", "start"] }, to: { type: "string" }, name: { type: "string" } },
			},
		};
		const gate = {
			name: "gate",
			approval: (a: { key?: string }) => (a.key ? "read" : "exec"),
			parameters: { properties: { key: { type: "string" } } },
		};
		expect(unprompted([hub, gate], "always-ask", {}, resolve)).toEqual([
			"hub (op send (with name: may prompt), list)",
			"gate (only with key)",
		]);
		expect(unprompted([hub], "yolo", {}, resolve)).toEqual(["hub"]);
	});

	test("the picture names them, and every bash.patterns rule with what it means for a remote call", () => {
		const patterns = [
			{ match: " git   status* ", approval: "ALLOW" },
			{ match: "rm *", approval: "deny" },
			{ match: "curl *", approval: "prompt" },
			{ match: "x", approval: "maybe" },
			"not a rule",
		];
		const lines = describeApprovals("always-ask", {}, "off", { unprompted: ["read", "todo"], bashPatterns: patterns });
		expect(lines).toContain(
			"  runs without a prompt (the host's own tiers, live settings): read, todo; close one with tools.approval.<tool>: deny",
		);
		expect(lines.filter(l => l.includes("bash.patterns["))).toEqual([
			"  bash.patterns[0] allow 'git status*': a remote bash whose whole command matches (no ; && | or other shell control) runs WITHOUT a prompt in every mode; close it: remove the rule or set tools.approval.bash: deny",
			"  bash.patterns[1] deny 'rm *': a remote bash with any segment matching is refused in every mode, yolo too",
			"  bash.patterns[2] prompt 'curl *': a remote bash with any segment matching prompts in every mode, yolo too (tools.approval.bash: deny refuses first)",
		]);
		expect(bashPatternRules({})).toEqual([]);
		// A hostile rule or tool name cannot rewrite the line it is shown on.
		const hostile = describeApprovals("yolo", { "x\x1b[2K": "deny" }, "off", {
			bashPatterns: [{ match: "a\rb", approval: "deny" }],
		});
		expect(hasHidden(hostile.join(""))).toBe(false);
	});
});

describe("describeApprovals", () => {
	test("yolo -> every tool runs without a prompt", () => {
		const [mode] = describeApprovals("yolo", {}, "write");
		expect(mode).toBe(
			"approvals: yolo: remote calls run every tool without a prompt (only tools.approval deny/prompt entries and bash.patterns deny/prompt rules stop one)",
		);
	});
	test("always-ask -> read tools run, others prompt; --approvals deny refuses them", () => {
		const [mode] = describeApprovals("always-ask", {}, "write");
		expect(mode).toContain("always-ask: tools of the host's read tier run; every other tool prompts");
		expect(mode).toContain("deny refuses at once");
	});
	test("issue 40: every picture names who answers a prompt: the host's terminal, Collab control-link holders; no view link, never the caller", () => {
		for (const mode of ["yolo", "write", "always-ask", "paranoid"]) {
			const who = describeApprovals(mode, { bash: "prompt" }, "off")[1] ?? "";
			expect(who).toStartWith("  who answers a prompt: the host's own terminal");
			expect(who).toContain("while the TUI shares its session with omp's Collab, every holder of the control link");
			expect(who).toContain("not a view link");
			expect(who).toContain("never the MCP caller: nothing it sends reaches the dialog");
		}
	});
	test("write -> read and write run, exec prompts", () => {
		expect(describeApprovals("write", {}, "write")[0]).toContain(
			"write: tools of the host's read and write tiers run; exec-tier tools prompt",
		);
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
		expect(lines.slice(2, -1)).toEqual([
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
