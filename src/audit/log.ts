/**
 * JSONL audit log (contract §9). Invariants: one writer per process, and every write is a
 * synchronous append, so records land in call order with no rotation race; a record is on disk
 * when `write` returns; a failed write never throws into the request path; the file is 0600 from
 * creation; arguments are redacted before they are serialized; the token never reaches the file.
 */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CallAudit } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { capString, capValue, digestString, redactArgs, type Scrub } from "./redact.ts";

/** @internal */
export const AUDIT_MAX_BYTES = 1024 * 1024;
/** No record is larger (contract §15): a caller cannot rotate history away with a few big calls. @internal */
export const RECORD_MAX_BYTES = 8 * 1024;
/** @internal */
export const AUDIT_GENERATIONS = 3;
const FAILURE_LOG_EVERY = 100;

/** Every file the log can be: the live one and its rotated generations `.1` to `.3`. */
export const auditGenerations = (path: string): string[] => [
	path,
	...Array.from({ length: AUDIT_GENERATIONS }, (_, i) => `${path}.${i + 1}`),
];

export function defaultAuditPath(env: Record<string, string | undefined> = process.env): string {
	const fromEnv = env.A2A_BRIDGE_AUDIT;
	return fromEnv && fromEnv.length > 0 ? fromEnv : join(homedir(), ".omp", "agent", "a2a-bridge.log");
}

export interface AuditRecord {
	id: string;
	sid: string | null;
	/** The name of the caller's token (`owner` or a named token), when a caller asked; the line's `token`. */
	tokenName?: string;
	client?: string | null;
	phase: "start" | "done" | "refused";
	tool: string;
	args: unknown;
	isError?: boolean;
	cancelled?: boolean;
	[extra: string]: unknown;
}

/** The caller's token name (the line's `token` field) and client name, when known (contract §13, §14). */
const caller = (tokenName: string | undefined, client: string | null | undefined): Record<string, string> => ({
	...(tokenName !== undefined ? { token: tokenName } : {}),
	...(typeof client === "string" ? { client } : {}),
});

/**
 * One JSONL line. Every field is capped as `args` is (long strings hashed, deep nesting cut); a line
 * still over RECORD_MAX_BYTES keeps only the fixed fields, with `args` as a digest.
 * @internal
 */
export function recordLine(record: AuditRecord, at: Date, scrub: Scrub = t => t): string {
	const { id, sid, tokenName, client, phase, tool, isError, args, ...rest } = record;
	// The caller's token name and client name sit next to `sid` (contract §14); absent when unknown.
	const who = capValue(caller(tokenName, client), scrub) as Record<string, string>;
	const head = {
		ts: at.toISOString(),
		id: scrub(id),
		sid: sid === null ? null : capString(sid, scrub),
		...who,
		phase,
		tool: capString(tool, scrub),
	};
	const redacted = redactArgs(args, scrub);
	const line = `${JSON.stringify({ ...head, isError, args: redacted, ...(capValue(rest, scrub) as object) })}\n`;
	if (Buffer.byteLength(line) <= RECORD_MAX_BYTES) return line;
	return `${JSON.stringify({ ...head, isError, args: digestString(redacted), oversized: true })}\n`;
}

export interface AuditOptions {
	path: string;
	log: (line: string) => void;
	/** The live secret(s), scrubbed from every line as a last line of defence. */
	secrets?: () => string | readonly string[];
	maxBytes?: number;
	now?: () => Date;
}

export interface AuditLog {
	path: string;
	write(record: AuditRecord): void;
	calls: Required<CallAudit>;
	failures(): number;
	flush(): Promise<void>;
}

/**
 * Contract §16: per token, the first refusal of a window is written at once, the rest as one count at its end.
 * @internal
 */
export const REFUSAL_WINDOW_MS = 1000;
/** Distinct tool names a coalesced record lists (each capped like every field). */
const REFUSAL_TOOLS_SHOWN = 8;

interface RefusalWindow {
	until: number;
	count: number;
	tools: Set<string>;
	client: string | null | undefined;
	timer: ReturnType<typeof setTimeout>;
}

export function createAuditLog(opts: AuditOptions): AuditLog {
	const maxBytes = opts.maxBytes ?? AUDIT_MAX_BYTES;
	const now = opts.now ?? (() => new Date());
	let size: number | null = null;
	let failed = 0;
	// The file stays open between records; it is reopened after rotation, after a failure, and when
	// someone removed or replaced it (fstat shows no links), so records never go to a lost inode.
	let fd: number | null = null;
	const close = (): void => {
		if (fd !== null) {
			try {
				closeSync(fd);
			} catch {}
			fd = null;
		}
	};

	const rotate = (): void => {
		for (let g = AUDIT_GENERATIONS - 1; g >= 1; g--) {
			try {
				renameSync(`${opts.path}.${g}`, `${opts.path}.${g + 1}`);
			} catch {
				// A missing generation is normal until the log has rotated that often.
			}
		}
		close();
		renameSync(opts.path, `${opts.path}.1`);
		size = 0;
	};

	const append = (line: string): void => {
		if (fd !== null && fstatSync(fd).nlink === 0) close();
		if (fd === null) {
			fd = openSync(opts.path, "a", 0o600);
			size = fstatSync(fd).size;
		}
		const bytes = Buffer.byteLength(line);
		if (size !== null && size > 0 && size + bytes > maxBytes) {
			rotate();
			fd = openSync(opts.path, "a", 0o600);
		}
		writeSync(fd, line);
		size = (size ?? 0) + bytes;
	};

	const write = (record: AuditRecord): void => {
		const live = opts.secrets?.() ?? [];
		const secrets = (typeof live === "string" ? [live] : live).filter(t => t.length > 0);
		// On the values, before escaping, digests and cuts (contract §16); then once more on the line.
		const scrub: Scrub = text => secrets.reduce((t, secret) => t.split(secret).join("<token>"), text);
		const line = scrub(recordLine(record, now(), scrub));
		try {
			append(line);
		} catch (err) {
			close();
			size = null;
			failed++;
			if (failed === 1 || failed % FAILURE_LOG_EVERY === 0) {
				const cause = (err as NodeJS.ErrnoException).code ?? errorText(err);
				opts.log(`a2a-bridge: audit record not written to ${opts.path} (${cause}); ${failed} failed so far`);
			}
		}
	};

	// One open window per token name: bounded by the live tokens.
	const windows = new Map<string, RefusalWindow>();
	const closeWindow = (name: string): void => {
		const w = windows.get(name);
		if (!w) return;
		windows.delete(name);
		clearTimeout(w.timer);
		if (w.count === 0) return;
		write({
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
	};
	const refused: Required<CallAudit>["refused"] = c => {
		const name = c.tokenName ?? "";
		const t = now().getTime();
		const open = windows.get(name);
		if (open && t < open.until) {
			open.count++;
			if (open.tools.size < REFUSAL_TOOLS_SHOWN) open.tools.add(c.tool);
			return;
		}
		closeWindow(name);
		write({
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
		const timer = setTimeout(() => closeWindow(name), REFUSAL_WINDOW_MS);
		timer.unref?.();
		windows.set(name, { until: t + REFUSAL_WINDOW_MS, count: 0, tools: new Set(), client: c.client, timer });
	};

	return {
		path: opts.path,
		write,
		calls: {
			refused,
			start: async c =>
				write({
					id: c.id,
					sid: c.sid,
					tokenName: c.tokenName,
					client: c.client,
					phase: "start",
					tool: c.tool,
					args: c.args,
					...(c.task !== undefined ? { task: c.task } : {}),
				}),
			done: async c =>
				write({
					id: c.id,
					sid: c.sid,
					tokenName: c.tokenName,
					client: c.client,
					phase: "done",
					tool: c.tool,
					isError: c.isError,
					args: c.args,
					...(c.cancelled ? { cancelled: true } : {}),
					...(c.abandoned ? { abandoned: true } : {}),
					...(c.task !== undefined ? { task: c.task } : {}),
				}),
		},
		failures: () => failed,
		flush: async () => {
			for (const name of [...windows.keys()]) closeWindow(name);
			close();
		},
	};
}
