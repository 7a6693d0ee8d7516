/**
 * Remote calls in flight, by the tool call id the bridge hands to the host, so the host's
 * `tool_approval_requested` event (which carries only that id) can be told it is a remote call and by
 * whom. omp has no supported way to label its prompt: the bridge titles the dialog itself through its
 * select wrapper (prompt-signal.ts, prompt-text.ts) and, in case that host surface ever changes, also
 * notifies just before it. The headless host reads both (`parseApprovalTitle`, `parseCallerLabel` in
 * src/headless/frames.ts; a unit test holds writer and reader to one format).
 */

import type { ExtensionAPI } from "@oh-my-pi/pi-coding-agent";
import type { CallerInfo, ToolCallRequest } from "../core/types.ts";
import { showSafely } from "../text/show.ts";

/** The notice before a remote call's approval prompt. Token names and tool names hold no spaces. @internal */
export function callerLabel(tool: string, caller: Pick<CallerInfo, "tokenName" | "client">): string {
	const client = caller.client ? `, client ${showSafely(caller.client, 80)}` : "";
	return `A2A remote call: ${showSafely(tool, 120)} — token ${showSafely(caller.tokenName, 80)}${client} awaits approval`;
}

export class RemoteCalls {
	readonly #byCallId = new Map<string, { tool: string; caller: CallerInfo }>();

	/** Runs `work` with the call registered; it is forgotten when the work settles. */
	async track<T>(req: ToolCallRequest, work: () => Promise<T>): Promise<T> {
		this.#byCallId.set(req.callId, { tool: req.name, caller: req.caller });
		try {
			return await work();
		} finally {
			this.#byCallId.delete(req.callId);
		}
	}

	label(toolCallId: string): string | null {
		const c = this.#byCallId.get(toolCallId);
		return c ? callerLabel(c.tool, c.caller) : null;
	}

	/** Before the host opens an approval prompt for a remote call, says whose call it is. */
	listen(pi: ExtensionAPI): void {
		pi.on("tool_approval_requested", (event, ctx) => {
			const text = this.label(event.toolCallId);
			if (text === null) return;
			try {
				ctx.ui.notify(text, "warning");
			} catch {
				// A notification that cannot be shown must never block the prompt.
			}
		});
	}
}
