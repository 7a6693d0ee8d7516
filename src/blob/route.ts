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
import type { ExtraRoute } from "../core/types.ts";
import { holding } from "./conn.ts";
import type { Ctx, Note, Refuse } from "./context.ts";
import { parseDigest } from "./digest.ts";
import { DigestCache } from "./digest-cache.ts";
import { download, Sending } from "./download.ts";
import { HashJobs } from "./hash-jobs.ts";
import { FileLocks } from "./locks.ts";
import { ownPathOf } from "./own.ts";
import {
	BLOB_METHODS,
	blobError,
	blobRefusal,
	isUpload,
	MAX_UPLOADS_IN_FLIGHT,
	parseBlobQuery,
	resolveBlobPath,
} from "./parse.ts";
import { post } from "./post.ts";
import { put } from "./put.ts";
import { BLOB_STALL_MS } from "./stall.ts";
import { EMPTY_BODY } from "./upload.ts";

export interface BlobDeps {
	home(): string;
	/** The Main session's working directory: relative paths resolve against it. */
	cwd(): string;
	audit(record: AuditRecord): void;
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

/** The `/blob` route: replace (PUT), append (POST), download (GET) and size (HEAD), per contract §7. */
export function createBlobRoute(deps: BlobDeps, locks = new FileLocks()): ExtraRoute {
	let uploading = 0;
	/** Uploads in flight per token name: each token stops at its share (contract §16). */
	const byToken = new Map<string, number>();
	const sending = new Sending();
	const digests = new DigestCache();
	const hashes = new HashJobs();

	return {
		methods: BLOB_METHODS,
		handle: async (req, { sid, tokenName, client, conn, ended, shareOf }) => {
			const writes = isUpload(req.method);
			const tool = writes ? "blob:write" : "blob:read";
			const who = { sid, tokenName, ...(client ? { client } : {}) };
			const note: Note = (path, offset, bytes, error) => {
				const isError = error !== undefined;
				const args = writes ? { path, offset, bytes, method: req.method } : { path, offset, bytes };
				deps.audit({
					id: crypto.randomUUID(),
					...who,
					phase: "done",
					tool,
					isError,
					args,
					...(isError ? { error } : {}),
				});
			};
			const refuse: Refuse = (path, offset, code, message, h, extra) => {
				note(path, offset, 0, message);
				return blobError(code, message, h, extra);
			};
			const share = (total: number) => shareOf?.(total) ?? total;
			const ctx: Ctx = {
				note,
				refuse,
				log: deps.log,
				digests,
				hashes,
				token: tokenName,
				shareOf: share,
				conn,
				...(ended ? { ended } : {}),
				stallMs: deps.stallMs ?? BLOB_STALL_MS,
			};
			const params = requestTarget(req.url).searchParams;
			const forbidden = blobRefusal(deps.config().blob, req.method);
			if (forbidden !== null) return refuse(params.get("path"), null, "forbidden", forbidden);
			const query = parseBlobQuery(params, req.method);
			if (!query.ok) return refuse(params.get("path"), null, query.code, query.message);
			const path = resolveBlobPath(query.value.path, { home: deps.home(), cwd: deps.cwd() });
			const offset = query.value.offset;
			if (!writes) return download(req, path, ctx, sending);
			const whole = parseDigest("Repr-Digest", req.headers.get("repr-digest"));
			if (!whole.ok) return refuse(path, offset, whole.code, whole.message);
			const part = parseDigest("Content-Digest", req.headers.get("content-digest"));
			if (!part.ok) return refuse(path, offset, part.code, part.message);
			const own = ownPathOf(path, deps.ownFiles?.() ?? []);
			if (own !== null) return refuse(path, offset, "own_file", `${own}: /blob does not write it`);
			// An empty PUT is a legitimate zero-byte replacement; an empty POST would change nothing.
			if (req.method === "POST" && (req.body === null || req.headers.get("content-length") === "0")) {
				return refuse(path, offset, "empty_body", EMPTY_BODY);
			}
			const mine = byToken.get(tokenName) ?? 0;
			const slots = share(MAX_UPLOADS_IN_FLIGHT);
			if (uploading >= MAX_UPLOADS_IN_FLIGHT || mine >= slots) {
				const why =
					mine >= slots
						? `this token's ${slots} uploads are in progress`
						: `${MAX_UPLOADS_IN_FLIGHT} uploads are in progress`;
				return refuse(path, offset, "too_many_uploads", `${why}; retry later`);
			}
			uploading++;
			byToken.set(tokenName, mine + 1);
			try {
				const expected = { whole: whole.value, part: part.value };
				const write = req.method === "PUT" ? put : post;
				return await holding(conn, () => write(req, path, offset, expected, ctx, locks));
			} finally {
				uploading--;
				const left = (byToken.get(tokenName) ?? 1) - 1;
				if (left > 0) byToken.set(tokenName, left);
				else byToken.delete(tokenName);
			}
		},
	};
}
