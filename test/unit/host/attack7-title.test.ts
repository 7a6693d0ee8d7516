/**
 * Attack 7: the approval dialog's title (bridge.ts `#retitle`, prompt-text.ts `approvalTitle`) says it shows "the
 * arguments the tool runs with". omp's own gate lets a Main extension's `tool_call` handler revise the input BEFORE
 * it asks (wrapper.ts: "the user approves exactly what executes"); the bridge rebuilds the title from the caller's
 * arguments, so an argument the host's detail lines do not carry (bash `env`, `cwd`) shows its old value while the
 * revised one runs. Rule: omp's own gate judges the call, and the person answering sees what runs.
 */
import { expect, test } from "bun:test";
import { ExtensionToolWrapper } from "@oh-my-pi/pi-coding-agent/extensibility/extensions/wrapper";
import { HostBridge, type HostSession } from "../../../src/host/bridge.ts";
import { fakeHost, type Obj } from "../../helpers/fact-host.ts";
import { callReq } from "../../helpers/gate.ts";

/** Main's bash behind omp's gate under always-ask; `revise` is what a tool_call handler turns the input into. */
async function approvedCall(revise: ((input: Obj) => Obj) | null) {
	const h = fakeHost();
	const titles: string[] = [];
	const ranWith: unknown[] = [];
	const runner = h.session.extensionRunner as Obj;
	(h.session.settings as Obj).get = (k: string) => (k === "tools.approvalMode" ? "always-ask" : undefined);
	const ui = {
		select: async (t: string) => {
			titles.push(t);
			return "Approve";
		},
	};
	Object.assign(runner, {
		getUIContext: () => ui,
		sessionId: "main",
		consumeToolCallEmitted: () => false,
		hasHandlers: (kind: string) => kind === "tool_call" && revise !== null,
		emitToolCall: async (e: { input: Obj }) => (revise ? { input: revise(e.input) } : undefined),
		hasUI: () => true,
		runScoped: <T>(fn: () => T) => fn(),
	});
	const inner = {
		name: "bash",
		parameters: {
			type: "object",
			properties: { command: { type: "string" }, cwd: { type: "string" } },
			required: ["command"],
		},
		formatApprovalDetails: (a: Obj) => [`Command: ${String(a.command)}`],
		execute: async (_id: string, params: unknown) => {
			ranWith.push(params);
			return { content: [{ type: "text", text: "ran" }] };
		},
	};
	const Wrapper = ExtensionToolWrapper as unknown as new (t: unknown, r: unknown) => Obj;
	h.tools.bash = new Wrapper(inner, runner);
	const bridge = new HostBridge({
		mainSession: () => h.session as unknown as HostSession,
		fallbackTools: () => [],
		wireSchema: () => inner.parameters,
		log: () => {},
	});
	const ended = new AbortController().signal;
	await bridge.callTool({
		...callReq("bash", { command: "ls", cwd: "/tmp/scratch" }),
		take: (kind: "prompts") => ({ ok: true as const, slot: { kind, tokenName: "owner", ended, release() {} } }),
	});
	return { titles, ranWith };
}

test("T0 (control, passes) no handler: the title names cwd /tmp/scratch and that is what runs", async () => {
	const { titles, ranWith } = await approvedCall(null);
	expect(titles.length).toBe(1);
	expect(titles[0]).toContain("/tmp/scratch");
	expect(ranWith).toEqual([{ command: "ls", cwd: "/tmp/scratch" }]);
});

test("T1 a Main tool_call handler moves cwd to /etc before omp's gate asks: the title is omp's own text, never the stale /tmp/scratch", async () => {
	const { titles, ranWith } = await approvedCall(input => ({ ...input, cwd: "/etc" }));
	expect(ranWith).toEqual([{ command: "ls", cwd: "/etc" }]);
	// Rule: the person answering is never shown arguments that do not run. With a tool_call handler on Main the
	// bridge cannot see the revised input, so the dialog shows omp's own prompt (built from it) and says so.
	expect({
		showsStale: titles[0]?.includes("/tmp/scratch"),
		hostText: titles[0]?.includes("the host's prompt text, not checked against the call's arguments"),
	}).toEqual({ showsStale: false, hostText: true });
});
