/**
 * Fakes of omp's approval gate as the bridge recognises it (src/host/facts-probe.ts `isBehindGate`): the
 * wrapper holds the tool it gates and Main's own extension runner.
 */

import type { ToolCallOutcome, ToolCallRequest } from "../../src/core/types.ts";
import { HostBridge, type HostSession } from "../../src/host/bridge.ts";

/** The fake Main's extension runner: no UI and no settings, so its gate asks nothing and runs each call. */
export const GATE_RUNNER = { getUIContext: (): unknown => undefined };

type Runner = { sessionSettings?: { get(key: string): unknown }; getUIContext(): unknown };
type Tool = { name?: string; execute(...a: unknown[]): Promise<unknown> };

/**
 * A stand-in for omp's gate class in the members the bridge and its trial use: it asks through the runner's UI
 * when the runner's settings say prompt (`always-ask` or the tool's policy), refuses on deny, else runs.
 */
class FakeGate {
	constructor(
		readonly tool: Tool,
		readonly runner: Runner,
	) {}

	async execute(...a: unknown[]): Promise<unknown> {
		const name = this.tool.name ?? "";
		const settings = this.runner.sessionSettings;
		const policy = (settings?.get("tools.approval") as Record<string, string> | undefined)?.[name];
		if (policy === "deny") throw new Error(`Tool ${name} blocked by user policy`);
		if (policy === "prompt" || settings?.get("tools.approvalMode") === "always-ask") {
			const ui = this.runner.getUIContext() as { select(t: string, o: string[]): Promise<string> };
			if ((await ui.select(`Allow tool: ${name}`, ["Approve", "Deny"])) !== "Approve")
				throw new Error(`Tool call denied by user: ${name}`);
		}
		return this.tool.execute(...a);
	}
}

/** `tool` behind the fake gate: its own members (but `execute`, which is the gate's), the gated tool, the runner. */
export function behindGate<T extends Tool>(tool: T, runner: Runner = GATE_RUNNER): T {
	const { execute: _, ...members } = tool;
	return Object.assign(new FakeGate(tool, runner), members) as unknown as T;
}

/** A remote call of `name` by the token `owner`, with no prompt slots to take. */
export const callReq = (name: string, args: Record<string, unknown> = {}): ToolCallRequest => ({
	callId: "call-1",
	name,
	args,
	signal: new AbortController().signal,
	caller: { sid: "sid-1", tokenName: "owner", client: null },
	take: () => ({ ok: false, code: "all", why: "no registry in this test", held: 0 }),
});

/** A call whose prompts may open (the owner's slot is free). */
export const callWithSlot = (name: string, args: Record<string, unknown> = { command: "id" }): ToolCallRequest => {
	const ended = new AbortController().signal;
	return {
		...callReq(name, args),
		take: kind => ({ ok: true, slot: { kind, tokenName: "owner", ended, release() {} } }),
	};
};

/** The bridge's host adapter over a fake Main (test/helpers/fact-host.ts), its stderr lines into `logs`. */
export const bridgeOver = (h: { session: object }, logs: string[] = []): HostBridge =>
	new HostBridge({
		mainSession: () => h.session as unknown as HostSession,
		fallbackTools: () => [],
		wireSchema: () => ({ type: "object" }),
		log: l => logs.push(l),
	});

/** A gate rule's two allowed ends: the gate asked (answered Deny), or the bridge refused naming the fact. */
export const judged = (asked: number, out: ToolCallOutcome): boolean =>
	asked === 1 || (out.refused === true && JSON.stringify(out.content).includes("host fact 'approval-gate'"));
