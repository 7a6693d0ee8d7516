/**
 * Refused calls, coalesced (contract §16): per token, the first refusal of a window is written at once,
 * the rest as one record with their count and tool names when the window ends, so a flood of refusals
 * cannot rotate history away. One open window per token name: bounded by the live tokens.
 */
import type { CallAudit } from "../core/types.ts";
import type { AuditRecord } from "./record.ts";

/** @internal */
export const REFUSAL_WINDOW_MS = 1000;
/** Distinct tool names a coalesced record lists (each capped like every field). */
const REFUSAL_TOOLS_SHOWN = 8;

type RefusedCall = Parameters<NonNullable<CallAudit["refused"]>>[0];

interface RefusalWindow {
	until: number;
	count: number;
	tools: Set<string>;
	client: string | null | undefined;
	timer: ReturnType<typeof setTimeout>;
}

export class RefusalWindows {
	readonly #windows = new Map<string, RefusalWindow>();
	readonly #write: (record: AuditRecord) => void;
	readonly #now: () => number;

	constructor(write: (record: AuditRecord) => void, now: () => number) {
		this.#write = write;
		this.#now = now;
	}

	/** A refused call: written when it opens its token's window, else counted into it. */
	refused(c: RefusedCall): void {
		const name = c.tokenName ?? "";
		const t = this.#now();
		const open = this.#windows.get(name);
		if (open && t < open.until) {
			open.count++;
			if (open.tools.size < REFUSAL_TOOLS_SHOWN) open.tools.add(c.tool);
			return;
		}
		this.#close(name);
		this.#write({
			id: c.id,
			sid: c.sid,
			phase: "refused",
			tool: c.tool,
			args: c.args,
			tokenName: c.tokenName,
			client: c.client,
			reason: c.reason,
			count: 1,
			...(c.task !== undefined ? { task: c.task } : {}),
		});
		const timer = setTimeout(() => this.#close(name), REFUSAL_WINDOW_MS);
		timer.unref?.();
		this.#windows.set(name, { until: t + REFUSAL_WINDOW_MS, count: 0, tools: new Set(), client: c.client, timer });
	}

	/** Ends every open window now, writing what each counted (the log's flush at a stop). */
	closeAll(): void {
		for (const name of [...this.#windows.keys()]) this.#close(name);
	}

	#close(name: string): void {
		const w = this.#windows.get(name);
		if (!w) return;
		this.#windows.delete(name);
		clearTimeout(w.timer);
		if (w.count === 0) return;
		this.#write({
			id: crypto.randomUUID(),
			sid: null,
			tokenName: name,
			client: w.client,
			phase: "refused",
			tool: [...w.tools][0] ?? "",
			args: null,
			count: w.count,
			tools: [...w.tools],
		});
	}
}
