/**
 * The audit log (contract §9, §19): one writer per process, safe beside others on one path (file.ts). Every
 * record is redacted and scrubbed of the live secrets before it is serialized (record.ts), paid from its
 * token's budget (budget.ts), appended whole and synced. Work is admitted only when its records are paid
 * for; refusals are coalesced (refusals.ts). A failed write never throws into the request path.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { CallAudit, Clock } from "../core/types.ts";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, TokenBudget } from "./budget.ts";
import { budgetFile } from "./budget-file.ts";
import { AuditFile } from "./file.ts";
import { type AuditRecord, RECORD_MAX_BYTES, recordLine } from "./record.ts";
import type { Scrub } from "./redact.ts";
import { type Refusal, RefusalWindows } from "./refusals.ts";
import type { RotationLock } from "./rotate.ts";

/**
 * Each file's size: 16 MiB, so the 4 files (64 MiB at most) hold an hour of one token at 8 KiB/s, about 10–20
 * calls a second, with room for every other token (budget.ts, docs/security.md). @internal
 */
export const AUDIT_MAX_BYTES = 16 * 1024 * 1024;
/** A `done` line is its `start` line plus at most these bytes (`isError`, `cancelled`, `abandoned`, `task`). */
const DONE_EXTRA_BYTES = 160;
/** Reservations held at once (work admitted, records not yet written): calls and transfers in flight. */
const MAX_HELD = 8192;

export function defaultAuditPath(env: Record<string, string | undefined>): string {
	const fromEnv = env.A2A_BRIDGE_AUDIT;
	return fromEnv && fromEnv.length > 0 ? fromEnv : join(homedir(), ".omp", "agent", "a2a-bridge.log");
}

export interface AuditOptions {
	path: string;
	log: (line: string) => void;
	/** The live secret(s), scrubbed from every line as a last line of defence. */
	secrets?: () => string | readonly string[];
	maxBytes?: number;
	/** The server's clock (its `now` only); the process's own when absent. */
	clock?: Pick<Clock, "now">;
	/** The per-token budget (tests give a small one on their clock); by default shared through `<path>.budget`. */
	budget?: TokenBudget;
	/** The cross-process lock rotation takes (the entry hands in flock); none: rotation within this process only. */
	lock?: RotationLock;
}

export interface AuditLog {
	path: string;
	/** A record of work that ran, or an event: always written, paid from its reservation or its token's budget. */
	write(record: AuditRecord): void;
	/** A request refused before anything moved: its own record while its token's budget pays, else counted. */
	refused(record: Refusal): void;
	/** Reserves `lines` records like this one before the work runs: 0 when admitted, else ms until it could be. */
	admit(record: AuditRecord, lines: number): number;
	/** The same without reserving: for work whose one record is written in the same turn (a `/host-llm` toggle). */
	check(record: AuditRecord): number;
	calls: Required<CallAudit>;
	/** Writes what the refusal windows still count, syncs, and closes the file: the log takes no record after. */
	close(): Promise<void>;
}

/** A record as its line, the live secrets scrubbed out. */
function lineOf(secretsNow: AuditOptions["secrets"], now: () => Date): (record: AuditRecord) => string {
	return record => {
		const live = secretsNow?.() ?? [];
		const secrets = (typeof live === "string" ? [live] : live).filter(t => t.length > 0);
		// On the values, before escaping, digests and cuts (contract §16); then once more on the line.
		const scrub: Scrub = text => secrets.reduce((t, secret) => t.split(secret).join("<token>"), text);
		return scrub(recordLine(record, now(), scrub));
	};
}

/** What `lines` records like the one whose line is `first` cost the budget (a `done` runs a little longer). */
function costOf(first: string, lines: number): number {
	return Math.min(RECORD_MAX_BYTES, Buffer.byteLength(first)) * lines + DONE_EXTRA_BYTES * (lines - 1);
}

interface Held {
	token: string;
	left: number;
	lines: number;
}

export function createAuditLog(opts: AuditOptions): AuditLog {
	const clock = opts.clock ?? { now: () => Date.now() };
	const file = new AuditFile(opts.path, opts.maxBytes ?? AUDIT_MAX_BYTES, opts.log, opts.lock);
	// One budget per token for every bridge on this path: the buckets are in a file beside the log.
	const shared = budgetFile(opts.path, AUDIT_BURST_BYTES, opts.lock, opts.log);
	const budget = opts.budget ?? new TokenBudget(() => clock.now(), AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S, shared);
	const held = new Map<string, Held>();
	const line = lineOf(opts.secrets, () => new Date(clock.now()));
	const release = (id: string): void => {
		const h = held.get(id);
		if (h === undefined) return;
		held.delete(id);
		budget.refund(h.token, h.left);
	};
	const write = (record: AuditRecord): void => {
		const text = line(record);
		const bytes = Buffer.byteLength(text);
		const h = held.get(record.id);
		if (h === undefined) budget.charge(record.tokenName ?? "", bytes);
		else {
			if (bytes > h.left) budget.charge(h.token, bytes - h.left);
			h.left = Math.max(0, h.left - bytes);
			if (--h.lines <= 0) release(record.id);
		}
		file.write(text);
	};
	const refusals = new RefusalWindows({ line, append: text => file.write(text) }, budget, () => clock.now());
	// Refused calls are always coalesced (contract §16); a refused `/blob` request or toggle keeps its own
	// record while its token's budget pays for it, and only beyond that is counted.
	const refused = (record: Refusal, always = false): void => {
		release(record.id);
		const text = always ? "" : line(record);
		if (!always && budget.take(record.tokenName ?? "", Buffer.byteLength(text))) file.write(text);
		else refusals.refused(record);
	};
	const admit = (record: AuditRecord, lines: number): number => {
		const token = record.tokenName ?? "";
		const need = costOf(line(record), lines);
		if (!budget.take(token, need)) return Math.max(1, budget.waitMs(token, need));
		if (held.size < MAX_HELD) held.set(record.id, { token, left: need, lines });
		return 0;
	};
	return {
		path: opts.path,
		write,
		refused,
		admit,
		check: record => budget.waitMs(record.tokenName ?? "", costOf(line(record), 1)),
		calls: callAudit(write, refused, admit),
		close: async () => {
			refusals.closeAll();
			await file.synced();
			file.close();
		},
	};
}

/** The core's seam (core/types.ts): a call is admitted for its two records, then written start and done. */
function callAudit(
	write: (record: AuditRecord) => void,
	refused: (record: Refusal, always: boolean) => void,
	admit: (record: AuditRecord, lines: number) => number,
): Required<CallAudit> {
	const fields = (c: Parameters<CallAudit["start"]>[0]) => ({
		id: c.id,
		sid: c.sid,
		tokenName: c.tokenName,
		client: c.client,
		tool: c.tool,
		args: c.args,
	});
	const task = (c: Parameters<CallAudit["start"]>[0]) => (c.task !== undefined ? { task: c.task } : {});
	return {
		admit: c => {
			const wait = admit({ ...fields(c), phase: "start", ...task(c) }, 2);
			if (wait > 0) refused({ ...fields(c), phase: "refused", reason: "audit budget spent", ...task(c) }, true);
			return wait;
		},
		refused: c => refused({ ...fields(c), phase: "refused", reason: c.reason, ...task(c) }, true),
		start: async c => write({ ...fields(c), phase: "start", ...task(c) }),
		done: async c =>
			write({
				...fields(c),
				phase: "done",
				isError: c.isError,
				...(c.cancelled ? { cancelled: true } : {}),
				...(c.abandoned ? { abandoned: true } : {}),
				...task(c),
			}),
	};
}
