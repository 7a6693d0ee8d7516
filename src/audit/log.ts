/**
 * JSONL audit log (contract §9, §19). Invariants: one writer per process, and every write is a
 * synchronous append, so records land in call order with no rotation race; a record is whole in the file
 * or absent (bytes of a failed write are cut back), always starts on its own line, and is synced to disk
 * right behind its write; a failed write never throws into the request path; a generation path held by
 * something the bridge did not make stops rotation, never the records; the file is 0600 from creation;
 * arguments are redacted before they are serialized; the token never reaches the file.
 */
import {
	closeSync,
	constants,
	fdatasync,
	fdatasyncSync,
	fstatSync,
	ftruncateSync,
	lstatSync,
	openSync,
	readSync,
	renameSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { reason, writeAll } from "../config/disk.ts";
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

export function defaultAuditPath(env: Record<string, string | undefined>): string {
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
				// Records not yet synced by the group commit are synced here, before the descriptor goes.
				if (dirty) fdatasyncSync(fd);
			} catch {}
			try {
				closeSync(fd);
			} catch {}
			fd = null;
			dirty = false;
		}
	};

	// Each reason rotation could not run is said once; records go on in the live file meanwhile.
	const toldRotation = new Set<string>();
	/** Shifts `.1`-`.3` down and the live file to `.1`; false (said once) when a generation is not a file of ours. */
	const rotate = (): boolean => {
		const gens = auditGenerations(opts.path).slice(1);
		const present = gens.map(g => {
			try {
				return lstatSync(g);
			} catch {
				return null;
			}
		});
		const odd = present.findIndex(st => st !== null && !st.isFile());
		const blocked = (why: string): false => {
			if (!toldRotation.has(why)) {
				toldRotation.add(why);
				opts.log(`a2a-bridge: audit log ${opts.path} not rotated: ${why}; records go on in it past the limit`);
			}
			return false;
		};
		if (odd >= 0) return blocked(`${gens[odd]} is not a regular file the bridge made (remove it)`);
		try {
			// Oldest first, so no rename lands on a generation not yet moved; `.3` is overwritten (dropped).
			for (let g = AUDIT_GENERATIONS - 1; g >= 1; g--) {
				if (present[g - 1] !== null) renameSync(`${opts.path}.${g}`, `${opts.path}.${g + 1}`);
			}
			close();
			renameSync(opts.path, `${opts.path}.1`);
		} catch (err) {
			return blocked(`a rename failed (${reason(err)})`);
		}
		return true;
	};

	/** Opens the live file; one whose last byte is no line end (a cut record, another writer) gets one first. */
	const open = (): number => {
		// Read and append (the last byte tells whether the file ends on a line boundary); never blocking, so a
		// FIFO planted at the path fails a write (EAGAIN) instead of freezing the host.
		const opened = openSync(
			opts.path,
			constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK,
			0o600,
		);
		const st = fstatSync(opened);
		size = st.size;
		const last = Buffer.alloc(1);
		if (st.isFile() && st.size > 0 && readSync(opened, last, 0, 1, st.size - 1) === 1 && last[0] !== 0x0a) {
			newlineFirst = true;
		}
		return opened;
	};
	let newlineFirst = false;

	/**
	 * One record in one write where possible, all of it or none: bytes a failed write left are cut back
	 * (when nobody appended since); what cannot be cut back is ended by a line break before the next record.
	 */
	const append = (line: string): void => {
		if (fd !== null && fstatSync(fd).nlink === 0) close();
		if (fd === null) fd = open();
		const bytes = Buffer.byteLength(line);
		if (size !== null && size > 0 && size + bytes > maxBytes && rotate()) fd = open();
		const data = Buffer.from(newlineFirst ? `\n${line}` : line);
		const at = fstatSync(fd).size;
		try {
			writeAll(fd, data);
		} catch (err) {
			const landed = (err as { written?: number }).written ?? 0;
			if (landed > 0) {
				try {
					if (fstatSync(fd).size !== at + landed) throw new Error("appended meanwhile");
					ftruncateSync(fd, at);
				} catch {
					newlineFirst = true;
				}
			}
			throw err;
		}
		newlineFirst = false;
		size = at + data.length;
		dirty = true;
	};

	// Group commit on Bun's thread pool, behind the writes: records written while a sync runs share the next
	// one. A call does not wait for it (a sync costs about 1 ms on this kind of disk, the bridge's whole part of
	// a call 0.1 ms); the record is in the file, whole, before the call goes on either way.
	let dirty = false;
	let syncing: Promise<void> | null = null;
	let queued: Promise<void> | null = null;
	const syncOnce = (): Promise<void> =>
		new Promise(resolve => {
			const target = fd;
			dirty = false;
			if (target === null) return resolve();
			fdatasync(target, err => {
				// EINVAL: a file that cannot be synced (/dev/full); EBADF: closed by a rotation, which synced it.
				const code = err?.code;
				if (err && code !== "EINVAL" && code !== "ENOTSUP" && !(code === "EBADF" && target !== fd)) fail(err);
				resolve();
			});
		});
	const synced = (): Promise<void> => {
		if (syncing === null) {
			if (!dirty) return Promise.resolve();
			syncing = syncOnce().finally(() => {
				syncing = null;
			});
			return syncing;
		}
		queued ??= syncing.then(() => {
			queued = null;
			return synced();
		});
		return queued;
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
			fail(err);
			return;
		}
		void synced();
	};
	const fail = (err: unknown): void => {
		failed++;
		if (failed === 1 || failed % FAILURE_LOG_EVERY === 0) {
			const cause = (err as NodeJS.ErrnoException).code ?? errorText(err);
			opts.log(`a2a-bridge: audit record not written to ${opts.path} (${cause}); ${failed} failed so far`);
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
		flush: async () => {
			for (const name of [...windows.keys()]) closeWindow(name);
			await synced();
			close();
		},
	};
}
