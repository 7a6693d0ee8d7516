/**
 * Fakes of omp's approval gate as the bridge recognises it (src/host/facts-probe.ts `isBehindGate`): the
 * wrapper holds the tool it gates and Main's own extension runner.
 */

/** The fake Main's extension runner: no UI, so no dialog is drawn. */
export const GATE_RUNNER = { getUIContext: (): unknown => undefined };

/** `tool` behind the fake gate: its own members, plus the gated tool and the runner. */
export function behindGate<T extends object>(tool: T): T & { tool: T; runner: typeof GATE_RUNNER } {
	return { ...tool, tool, runner: GATE_RUNNER };
}
