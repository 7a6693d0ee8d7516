/** What the `/blob` handlers share: the per-request audit note, refusal and connection, and small fs helpers. */
import { type Stats, statSync } from "node:fs";
import type { Connection, SlotKind, Taken } from "../core/types.ts";
import type { DigestCache } from "./digest-cache.ts";
import type { HashJobs } from "./hash-jobs.ts";
import type { BlobCode } from "./parse.ts";

export const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

/** Writes one audit record; `error` present means the request failed. */
export type Note = (path: string | null, offset: number | null, bytes: number, error?: string) => void;
/** Audits a refusal (0 bytes moved) and builds its response. */
export type AuditedRefuse = (
	path: string | null,
	offset: number | null,
	code: BlobCode,
	message: string,
	h?: Record<string, string>,
	extra?: Record<string, unknown>,
) => Response;
export interface Ctx {
	/** The request's one audit record (a second note is dropped: one record per request, whatever ends it). */
	note: Note;
	/** Whether the request's record is written. */
	recorded(): boolean;
	refuse: AuditedRefuse;
	log(line: string): void;
	/** Whole-file digests already computed (blob/digest-cache.ts). */
	digests: DigestCache;
	/** Whole-file hashes running for downloads, shared per file version (blob/hash-jobs.ts). */
	hashes: HashJobs;
	/** The caller's token name, and a slot of the one registry of what tokens hold (`RouteContext.take`). */
	tokenName: string;
	take(kind: SlotKind, onEnd?: (reason: string) => void, joins?: string): Taken;
	/** The 401 a caller whose secret ended gets (contract §16). */
	recheck(): Response | undefined;
	/** The request's connection: its idle timer is off while a body streams; a stalled one is closed. */
	conn: Connection;
	/** Aborts when the caller's secret is revoked or rotated away: a running upload stops taking bytes. */
	ended?: AbortSignal;
	/** An upload that receives no byte for this long ends (BLOB_STALL_MS, or shorter in tests). */
	stallMs: number;
}

export function statOrNull(path: string): Stats | null {
	try {
		return statSync(path);
	} catch (err) {
		if (errno(err) === "ENOENT" || errno(err) === "ENOTDIR") return null;
		throw err;
	}
}

/** What a caller whose secret ended before it took its slot gets: one audit record, and the 401 of contract §16. */
export function endedBefore(ctx: Ctx, path: string, offset: number | null): Response {
	const why = "token revoked or rotated";
	ctx.note(path, offset, 0, why);
	return ctx.recheck() ?? ctx.refuse(path, offset, "client_disconnected", why);
}
