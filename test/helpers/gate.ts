/**
 * Fakes of omp's approval gate as the bridge recognises it (src/host/facts-probe.ts `isBehindGate`): the
 * wrapper holds the tool it gates and Main's own extension runner.
 */

import type { ToolCallRequest } from "../../src/core/types.ts";

/** The fake Main's extension runner: no UI, so no dialog is drawn. */
export const GATE_RUNNER = { getUIContext: (): unknown => undefined };

/** `tool` behind the fake gate: its own members, plus the gated tool and the runner. */
export function behindGate<T extends object>(tool: T): T & { tool: T; runner: typeof GATE_RUNNER } {
	return { ...tool, tool, runner: GATE_RUNNER };
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
