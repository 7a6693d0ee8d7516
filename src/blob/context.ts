/** What the `/blob` handlers share: the per-request audit note, refusal and connection, and small fs helpers. */
import { type Stats, statSync } from "node:fs";
import type { Connection } from "../core/types.ts";
import type { DigestCache } from "./digest-cache.ts";
import type { HashJobs } from "./hash-jobs.ts";
import type { BlobCode } from "./parse.ts";

export const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

/** Writes one audit record; `error` present means the request failed. */
export type Note = (path: string | null, offset: number | null, bytes: number, error?: string) => void;
/** Audits a refusal (0 bytes moved) and builds its response. */
export type Refuse = (
	path: string | null,
	offset: number | null,
	code: BlobCode,
	message: string,
	h?: Record<string, string>,
	extra?: Record<string, unknown>,
) => Response;
export interface Ctx {
	note: Note;
	refuse: Refuse;
	log(line: string): void;
	/** Whole-file digests already computed (blob/digest-cache.ts). */
	digests: DigestCache;
	/** Whole-file hashes running for downloads, shared per file version (blob/hash-jobs.ts). */
	hashes: HashJobs;
	/** The caller's token name, and its share of a bound of `total` slots (contract §16, §19). */
	token: string;
	shareOf(total: number): number;
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
