/**
 * Raw bytes over HTTP (contract §7). `PUT /blob` replaces a file atomically (blob/put.ts), `POST` appends
 * or resumes (blob/post.ts), `GET`/`HEAD` stream a file back (blob/download.ts). Guards in order: the
 * `blob` switch, the query, the digest fields, the bridge's own files, the upload cap. Invariants: one
 * upload per file (device and inode; across processes a flock) at a time, the lock released on every
 * exit; regular files only; the body goes to disk as it arrives, never gathered in memory; every request
 * leaves one audit record with `{path, offset, bytes}` (uploads also `method`), never contents. A leaf:
 * `node:fs` and HTTP, not the host.
 */
import type { AuditRecord } from "../audit/record.ts";
import type { BridgeConfig } from "../config/config.ts";
import { requestTarget } from "../core/target.ts";
import type { ExtraRoute, RouteContext } from "../core/types.ts";
import { holding } from "./conn.ts";
import { type AuditedRefuse, type Ctx, endedBefore, type Note } from "./context.ts";
import { parseDigest } from "./digest.ts";
import { DigestCache } from "./digest-cache.ts";
import { download, Sending } from "./download.ts";
import { HashJobs, MAX_HASH_JOBS } from "./hash-jobs.ts";
import { FileLocks } from "./locks.ts";
import {
	BLOB_METHODS,
	type BlobCode,
	blobError,
	blobRefusal,
	isUpload,
	MAX_DOWNLOADS_IN_FLIGHT,
	MAX_UPLOADS_IN_FLIGHT,
	NO_CWD,
	parseBlobQuery,
	resolveBlobPath,
} from "./parse.ts";
import { type Place, reach, release } from "./place.ts";
import { post } from "./post.ts";
import { put } from "./put.ts";
import { BLOB_STALL_MS } from "./stall.ts";
import { EMPTY_BODY, type Expected } from "./upload.ts";

export interface BlobDeps {
	home(): string;
	/** Main's working directory; null when the host does not say (host fact main-cwd): relative paths refused. */
	cwd(): string | null;
	audit(record: AuditRecord): void;
	/** A request refused before it moved a byte: coalesced per token (default: `audit`). */
	refused?(record: AuditRecord): void;
	/** Reserves the request's record in its token's audit budget: 0, or ms until it could (refused 429). */
	admit?(record: AuditRecord): number;
	log(line: string): void;
	/** The config as the bridge started with it: the `blob` switch. */
	config(): Pick<BridgeConfig, "blob">;
	/** The upload stall bound (default BLOB_STALL_MS; shorter only through a testing knob). */
	stallMs?: number;
	/**
	 * The bridge's own files (config, audit log, runtime file): never upload targets, nor any name beside one
	 * that extends it by "." (locks, temp files, generations), nor a path under such a name (blob/own.ts).
	 */
	ownFiles?: () => readonly string[];
}

type Recorder = (path: string | null, offset: number | null, bytes: number, error?: string) => AuditRecord;
const retryAfter = (ms: number) => ({ "retry-after": String(Math.ceil(ms / 1000)) });
const budgetSpent = (ms: number): string =>
	`this token's audit budget is spent: its /blob requests are refused for about ${Math.ceil(ms / 1000)} s`;

/** What every request of one route shares: the locks, the responses being sent, digest cache and running hashes. */
interface Shared {
	locks: FileLocks;
	sending: Sending;
	digests: DigestCache;
	hashes: HashJobs;
}

/** The `/blob` route: replace (PUT), append (POST), download (GET) and size (HEAD), per contract §7. */
export function createBlobRoute(deps: BlobDeps, locks = new FileLocks()): ExtraRoute {
	const shared: Shared = {
		locks,
		sending: new Sending(),
		digests: new DigestCache(),
		hashes: new HashJobs(),
	};
	return {
		methods: BLOB_METHODS,
		// Opted out of the pipeline's body read: uploads stream their body, watched by upload.ts's `watchIdentity`.
		body: "stream",
		bounds: { uploads: MAX_UPLOADS_IN_FLIGHT, downloads: MAX_DOWNLOADS_IN_FLIGHT, digests: MAX_HASH_JOBS },
		handle: async (req, routeCtx) => {
			const ctx = requestCtx(req, routeCtx, deps, shared);
			const params = requestTarget(req.url).searchParams;
			const forbidden = blobRefusal(deps.config().blob, req.method);
			if (forbidden !== null) return ctx.refuse(params.get("path"), null, "forbidden", forbidden);
			const query = parseBlobQuery(params, req.method);
			if (!query.ok) return ctx.refuse(params.get("path"), null, query.code, query.why);
			const path = resolveBlobPath(query.value.path, { home: deps.home(), cwd: deps.cwd() });
			if (path === null) return ctx.refuse(query.value.path, null, "bad_path", NO_CWD);
			const wait = deps.admit?.(ctx.record(path, query.value.offset, Number.MAX_SAFE_INTEGER)) ?? 0;
			if (wait > 0) return ctx.refuse(path, query.value.offset, "audit_budget", budgetSpent(wait), retryAfter(wait));
			if (!isUpload(req.method)) return download(req, path, ctx, shared.sending);
			return upload(req, path, query.value.offset, ctx, deps, shared);
		},
	};
}

/** The request's audit note, refusal and the rest of what its handlers share (blob/context.ts). */
function requestCtx(req: Request, routeCtx: RouteContext, deps: BlobDeps, shared: Shared): Ctx & { record: Recorder } {
	const writes = isUpload(req.method);
	const tool = writes ? "blob:write" : "blob:read";
	const who = {
		sid: routeCtx.sid,
		tokenName: routeCtx.tokenName,
		...(routeCtx.client ? { client: routeCtx.client } : {}),
	};
	const id = crypto.randomUUID();
	const record = (path: string | null, offset: number | null, bytes: number, error?: string): AuditRecord => {
		const isError = error !== undefined;
		const args = writes ? { path, offset, bytes, method: req.method } : { path, offset, bytes };
		return { id, ...who, phase: "done", tool, isError, args, ...(isError ? { error } : {}) };
	};
	let written = false;
	// Nothing moved: a refusal, coalesced per token; bytes that moved are always recorded whole. One record
	// per request id: its token's budget admitted one line, and two ends of one download are one end.
	const note: Note = (path, offset, bytes, error) => {
		if (written) return;
		written = true;
		(error !== undefined && bytes === 0 ? (deps.refused ?? deps.audit) : deps.audit)(
			record(path, offset, bytes, error),
		);
	};
	const refuse: AuditedRefuse = (path, offset, code, message, h, extra) => {
		note(path, offset, 0, message);
		return blobError(code, message, h, extra);
	};
	return {
		record,
		note,
		recorded: () => written,
		refuse,
		log: deps.log,
		digests: shared.digests,
		hashes: shared.hashes,
		tokenName: routeCtx.tokenName,
		take: routeCtx.take,
		recheck: routeCtx.recheck,
		conn: routeCtx.conn,
		...(routeCtx.ended ? { ended: routeCtx.ended } : {}),
		stallMs: deps.stallMs ?? BLOB_STALL_MS,
	};
}

/** An upload after the query: its digest fields, the bridge's own files, an empty POST, then a slot of its token's. */
async function upload(
	req: Request,
	path: string,
	offset: number | null,
	ctx: Ctx,
	deps: BlobDeps,
	shared: Shared,
): Promise<Response> {
	const { refuse } = ctx;
	const whole = parseDigest("Repr-Digest", req.headers.get("repr-digest"));
	if (!whole.ok) return refuse(path, offset, whole.code, whole.why);
	const part = parseDigest("Content-Digest", req.headers.get("content-digest"));
	if (!part.ok) return refuse(path, offset, part.code, part.why);
	// The check and the write are about one directory, held open from here to the reply (blob/place.ts).
	const reached = reach(path, deps.ownFiles?.() ?? [], ctx.log);
	if (!reached.ok && reached.code === "own_file") {
		return refuse(path, offset, "own_file", `${reached.why}: /blob does not write it`);
	}
	try {
		return await write(req, path, offset, ctx, reached.ok ? reached.place : reached, shared, whole.value, part.value);
	} finally {
		if (reached.ok) release(reached.place);
	}
}

/** The rest of an upload, once it is not the bridge's own: an empty POST, then a slot of its token's. */
async function write(
	req: Request,
	path: string,
	offset: number | null,
	ctx: Ctx,
	place: Place | { code: BlobCode; why: string },
	shared: Shared,
	whole: Expected["whole"],
	part: Expected["part"],
): Promise<Response> {
	const { refuse } = ctx;
	// An empty PUT is a legitimate zero-byte replacement; an empty POST would change nothing.
	if (req.method === "POST" && (req.body === null || req.headers.get("content-length") === "0")) {
		return refuse(path, offset, "empty_body", EMPTY_BODY);
	}
	// Revoking the token cuts the connection; the body writer sees the slot's signal and stops taking bytes.
	const taken = ctx.take("uploads", () => ctx.conn.closeSoon());
	if (!taken.ok) {
		if (taken.code === "revoked") return endedBefore(ctx, path, offset);
		return refuse(path, offset, "too_many_uploads", `${taken.why}; retry later`);
	}
	try {
		if ("code" in place) {
			const tail = req.method === "POST" ? "0 bytes landed" : "this upload changed nothing";
			return refuse(path, offset, place.code, place.code === "write_failed" ? `${place.why}; ${tail}` : place.why);
		}
		const expected = { whole, part };
		const write = req.method === "PUT" ? put : post;
		const held: Ctx = { ...ctx, ended: taken.slot.ended };
		return await holding(ctx.conn, () => write(req, path, offset, expected, held, shared.locks, place));
	} finally {
		taken.slot.release();
	}
}
