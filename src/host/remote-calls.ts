/**
 * Remote calls in flight, by the tool call id the bridge hands to the host, so the host's
 * `tool_approval_requested` event (which carries only that id) can be told it is a remote call and by
 * whom. omp has no supported way to label its prompt: the bridge titles the dialog itself through its
 * select wrapper (prompt-signal.ts, prompt-text.ts) and, in case that host surface ever changes, also
 * notifies just before it. The headless host reads both (`parseApprovalTitle`, `parseCallerLabel` in
 * src/headless/frames.ts; a unit test holds writer and reader to one format). In the TUI the notice is laid
 * out in marked rows by the prompt's own rule (src/text/rows.ts), so a padded client name starts no row.
 */

import type { ExtensionAPI } from "@oh-my-pi/pi-coding-agent";
import type { CallerInfo, ToolCallRequest } from "../core/types.ts";
import { rows, rowWidth } from "../text/rows.ts";
import { showSafely } from "../text/show.ts";

/** omp's TUI shows a warning as `Warning: <message>` in a text padded a column each side (ui-helpers.ts:1066). */
const WARNING_PREFIX = "Warning: ";
const NOTICE_FRAME = 2;
/** The notice on a screen too narrow for any row: fixed text, nothing the caller chose. */
const NOTICE_TOO_NARROW = "A2A remote call awaits approval (this screen is too narrow to say whose)";

/** Row width for the notice in the host's TUI (`rowWidth`); null: too narrow; Infinity over rpc (one line). @internal */
export function noticeRowWidth(out: { isTTY?: boolean; columns?: number }): number | null {
	return out.isTTY && out.columns ? rowWidth(out.columns, NOTICE_FRAME) : Number.POSITIVE_INFINITY;
}

/**
 * The notice before a remote call's approval prompt. Token names and tool names hold no spaces. At a finite
 * `width` its rows are cut as omp shows them, after its `Warning: `, every row after the first marked.
 * @internal
 */
export function callerLabel(
	tool: string,
	caller: Pick<CallerInfo, "tokenName" | "client">,
	width: number | null = Number.POSITIVE_INFINITY,
): string {
	if (width === null) return NOTICE_TOO_NARROW;
	const client = caller.client ? `, client ${showSafely(caller.client, 80)}` : "";
	const line = `A2A remote call: ${showSafely(tool, 120)} — token ${showSafely(caller.tokenName, 80)}${client} awaits approval`;
	if (!Number.isFinite(width)) return line;
	const [first = "", ...next] = rows(`${WARNING_PREFIX}${line}`, width);
	return [first.slice(WARNING_PREFIX.length), ...next].join("\n");
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

	label(toolCallId: string, width: number | null = Number.POSITIVE_INFINITY): string | null {
		const c = this.#byCallId.get(toolCallId);
		return c ? callerLabel(c.tool, c.caller, width) : null;
	}

	/** Before the host opens an approval prompt for a remote call, says whose call it is. */
	listen(pi: ExtensionAPI): void {
		pi.on("tool_approval_requested", (event, ctx) => {
			const text = this.label(event.toolCallId, noticeRowWidth(process.stdout));
			if (text === null) return;
			try {
				ctx.ui.notify(text, "warning");
			} catch {
				// A notification that cannot be shown must never block the prompt.
			}
		});
	}
}
