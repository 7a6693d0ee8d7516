/**
 * The audit log (contract §9, §19): one writer per process. Every record is redacted and scrubbed of the
 * live secrets before it is serialized (record.ts), appended whole and synced (file.ts); refused calls are
 * coalesced per token (refusals.ts). A failed write never throws into the request path; the token never
 * reaches the file.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { CallAudit } from "../core/types.ts";
import { AuditFile } from "./file.ts";
import { type AuditRecord, recordLine } from "./record.ts";
import type { Scrub } from "./redact.ts";
import { RefusalWindows } from "./refusals.ts";

/** @internal */
export const AUDIT_MAX_BYTES = 1024 * 1024;

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
	now?: () => Date;
}

export interface AuditLog {
	path: string;
	write(record: AuditRecord): void;
	calls: Required<CallAudit>;
	flush(): Promise<void>;
}

export function createAuditLog(opts: AuditOptions): AuditLog {
	const now = opts.now ?? (() => new Date());
	const file = new AuditFile(opts.path, opts.maxBytes ?? AUDIT_MAX_BYTES, opts.log);
	const write = (record: AuditRecord): void => {
		const live = opts.secrets?.() ?? [];
		const secrets = (typeof live === "string" ? [live] : live).filter(t => t.length > 0);
		// On the values, before escaping, digests and cuts (contract §16); then once more on the line.
		const scrub: Scrub = text => secrets.reduce((t, secret) => t.split(secret).join("<token>"), text);
		file.write(scrub(recordLine(record, now(), scrub)));
	};
	const refusals = new RefusalWindows(write, () => now().getTime());
	return {
		path: opts.path,
		write,
		calls: {
			refused: c => refusals.refused(c),
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
			refusals.closeAll();
			await file.synced();
			file.close();
		},
	};
}
