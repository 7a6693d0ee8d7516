/**
 * One audit record as its JSONL line (contract §9, §15): fixed field order (`ts, id, sid, token, client,
 * phase, tool, isError, args, …`), every field capped as `args` is, and no line over RECORD_MAX_BYTES, so
 * a caller cannot rotate history away with a few big calls. Pure.
 */
import { capString, capValue, digestString, redactArgs, type Scrub } from "./redact.ts";

/** No record is larger (contract §15). */
export const RECORD_MAX_BYTES = 8 * 1024;

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
