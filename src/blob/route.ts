/**
 * Raw bytes over HTTP (contract §7). `POST /blob` streams a request body to disk, `GET`/`HEAD` stream a
 * file back. Invariants: an upload never truncates and lands at the file's current end; one upload per
 * file (device and inode) at a time, the lock released on every exit; regular files only; the body goes to the file as it arrives,
 * never gathered in memory, so memory does not grow with the size; every request leaves one audit record with
 * `{path, offset, bytes}`, never contents. A leaf: it knows `node:fs` and HTTP, not the host.
 */
import type { AuditRecord } from "../audit/log.ts";
import { requestTarget } from "../core/target.ts";
import type { ExtraRoute } from "../core/types.ts";
import type { Ctx, Note, Refuse } from "./context.ts";
import { download } from "./download.ts";
import { FileLocks } from "./locks.ts";
import {
	BLOB_METHODS,
	type BlobMode,
	blobError,
	blobRefusal,
	MAX_UPLOADS_IN_FLIGHT,
	parseBlobQuery,
	resolveBlobPath,
} from "./parse.ts";
import { EMPTY_BODY, upload } from "./upload.ts";

export interface BlobDeps {
	home(): string;
	/** The Main session's working directory: relative paths resolve against it. */
	cwd(): string;
	audit(record: AuditRecord): void;
	log(line: string): void;
	/** The config's `blob` switch (default "write"). */
	mode?: () => BlobMode;
}

/** The `/blob` route: upload (POST), download (GET) and size (HEAD), per contract §7. */
export function createBlobRoute(deps: BlobDeps): ExtraRoute {
	let uploading = 0;
	const locks = new FileLocks();

	return {
		methods: BLOB_METHODS,
		handle: async (req, { sid, token, client }) => {
			const tool = req.method === "POST" ? "blob:write" : "blob:read";
			const who = { sid, token, ...(client ? { client } : {}) };
			const note: Note = (path, offset, bytes, error) => {
				const isError = error !== undefined;
				const args = { path, offset, bytes };
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
			const refuse: Refuse = (path, offset, code, message, h) => {
				note(path, offset, 0, message);
				return blobError(code, message, h);
			};
			const ctx: Ctx = { note, refuse, log: deps.log };
			const params = requestTarget(req.url).searchParams;
			const forbidden = blobRefusal(deps.mode?.() ?? "write", req.method);
			if (forbidden !== null) return refuse(params.get("path"), null, "forbidden", forbidden);
			const query = parseBlobQuery(params, req.method);
			if (!query.ok) return refuse(params.get("path"), null, query.code, query.message);
			const path = resolveBlobPath(query.value.path, { home: deps.home(), cwd: deps.cwd() });
			const offset = query.value.offset;
			if (req.method !== "POST") return download(req, path, ctx);
			if (req.body === null || req.headers.get("content-length") === "0") {
				return refuse(path, offset, "empty_body", EMPTY_BODY);
			}
			if (uploading >= MAX_UPLOADS_IN_FLIGHT) {
				return refuse(
					path,
					offset,
					"too_many_uploads",
					`${MAX_UPLOADS_IN_FLIGHT} uploads are in progress; retry later`,
				);
			}
			uploading++;
			try {
				return await upload(req, path, offset, ctx, locks);
			} finally {
				uploading--;
			}
		},
	};
}
