/**
 * Refusals and failures before anything ran, coalesced per token (contract §16, §19): the first of a window
 * is written at once when the token's budget pays for it, the rest as one record with their count and tool
 * names when the window ends and the budget pays; until it does, the window stays open and counts on. One
 * open window per token name: bounded like the budget's buckets.
 */
import type { TokenBudget } from "./budget.ts";
import type { AuditRecord } from "./record.ts";

/** @internal */
export const REFUSAL_WINDOW_MS = 1000;
/** Distinct tool names a coalesced record lists (each capped like every field). */
const REFUSAL_TOOLS_SHOWN = 8;
/** Open windows beyond this are closed (written) first: a bound even if token names churn. */
const MAX_WINDOWS = 4096;

/** A record of something refused before anything ran (a call's `phase: "refused"`, a `/blob` refusal's `done`). */
export type Refusal = AuditRecord & { reason?: string };

interface RefusalWindow {
	until: number;
	count: number;
	tools: Set<string>;
	client: string | null | undefined;
	timer: ReturnType<typeof setTimeout> | null;
}

/** How the log writes: a record's line, and the append of one. */
export interface RefusalSink {
	line(record: AuditRecord): string;
	append(line: string): void;
}

export class RefusalWindows {
	readonly #windows = new Map<string, RefusalWindow>();
	readonly #sink: RefusalSink;
	readonly #budget: TokenBudget;
	readonly #now: () => number;

	constructor(sink: RefusalSink, budget: TokenBudget, now: () => number) {
		this.#sink = sink;
		this.#budget = budget;
		this.#now = now;
	}

	/** A refusal: written when it opens its token's window and the budget pays, else counted into the window. */
	refused(r: Refusal): void {
		const name = r.tokenName ?? "";
		const t = this.#now();
		const due = this.#windows.get(name);
		if (due && t >= due.until) this.#end(name);
		// Still open: inside its window, or its count not yet paid for.
		const open = this.#windows.get(name);
		if (open) {
			open.count++;
			if (open.tools.size < REFUSAL_TOOLS_SHOWN) open.tools.add(r.tool);
			return;
		}
		if (this.#windows.size >= MAX_WINDOWS) this.#flushOldest();
		const { reason, ...rest } = r;
		const line = this.#sink.line({ ...rest, ...(reason !== undefined ? { reason } : {}), count: 1 });
		const paid = this.#budget.take(name, Buffer.byteLength(line));
		if (paid) this.#sink.append(line);
		const w: RefusalWindow = {
			until: t + REFUSAL_WINDOW_MS,
			count: paid ? 0 : 1,
			tools: new Set(paid ? [] : [r.tool]),
			client: r.client,
			timer: null,
		};
		this.#windows.set(name, w);
		this.#schedule(name, w, REFUSAL_WINDOW_MS);
	}

	/** Ends every open window now, writing what each counted, paid or not (the log's flush at a stop). */
	closeAll(): void {
		for (const name of [...this.#windows.keys()]) this.#end(name, true);
	}

	#schedule(name: string, w: RefusalWindow, ms: number): void {
		if (w.timer !== null) clearTimeout(w.timer);
		w.timer = setTimeout(() => this.#end(name), ms);
		w.timer.unref?.();
	}

	/** Writes a window's count record when the budget pays (or `force`); else waits for the refill. */
	#end(name: string, force = false): void {
		const w = this.#windows.get(name);
		if (!w) return;
		if (w.count === 0) {
			this.#drop(name, w);
			return;
		}
		const line = this.#sink.line(countRecord(name, w));
		const bytes = Buffer.byteLength(line);
		if (force) this.#budget.charge(name, bytes);
		else if (!this.#budget.take(name, bytes)) {
			this.#schedule(name, w, Math.max(REFUSAL_WINDOW_MS, this.#budget.waitMs(name, bytes)));
			return;
		}
		this.#sink.append(line);
		this.#drop(name, w);
	}

	#drop(name: string, w: RefusalWindow): void {
		if (w.timer !== null) clearTimeout(w.timer);
		this.#windows.delete(name);
	}

	#flushOldest(): void {
		const oldest = this.#windows.keys().next().value;
		if (oldest !== undefined) this.#end(oldest, true);
	}
}

const countRecord = (name: string, w: RefusalWindow): AuditRecord => ({
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
