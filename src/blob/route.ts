/**
 * Raw bytes over HTTP (contract §7). `POST /blob` streams a request body to disk, `GET`/`HEAD` stream a
 * file back. Invariants: an upload never truncates and lands at the file's current end; one upload per
 * resolved path at a time, the lock released on every exit; the body goes to the file as it arrives,
 * never gathered in memory, so memory does not grow with the size; every request leaves one audit record with
 * `{path, offset, bytes}`, never contents. A leaf: it knows `node:fs` and HTTP, not the host.
 */
import {
	closeSync,
	fstatSync,
	mkdirSync,
	openSync,
	rmdirSync,
	type Stats,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { dirname } from "node:path";
import type { AuditRecord } from "../audit/log.ts";
import { requestTarget } from "../core/target.ts";
import type { ExtraRoute } from "../core/types.ts";
import { FOLLOW_MIN_BYTES, followHash, hashRange } from "./hash.ts";
import {
	BLOB_METHODS,
	type BlobCode,
	blobError,
	json,
	MAX_UPLOADS_IN_FLIGHT,
	parseBlobQuery,
	parseRange,
	resolveBlobPath,
} from "./parse.ts";

export {
	BLOB_ERRORS,
	BLOB_METHODS,
	blobError,
	MAX_UPLOADS_IN_FLIGHT,
	parseBlobQuery,
	parseRange,
	resolveBlobPath,
} from "./parse.ts";

export interface BlobDeps {
	home(): string;
	/** The Main session's working directory: relative paths resolve against it. */
	cwd(): string;
	audit(record: AuditRecord): void;
	log(line: string): void;
}

const osReason = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

/** Writes one audit record; `error` present means the request failed. */
type Note = (path: string | null, offset: number | null, bytes: number, error?: string) => void;
/** Audits a refusal (0 bytes moved) and builds its response. */
type Refuse = (
	path: string | null,
	offset: number | null,
	code: BlobCode,
	message: string,
	h?: Record<string, string>,
) => Response;
interface Ctx {
	note: Note;
	refuse: Refuse;
	log(line: string): void;
}

/** The `/blob` route: upload (POST), download (GET) and size (HEAD), per contract §7. */
export function createBlobRoute(deps: BlobDeps): ExtraRoute {
	const uploading = new Set<string>();

	return {
		methods: BLOB_METHODS,
		handle: async (req, { sid }) => {
			const tool = req.method === "POST" ? "blob:write" : "blob:read";
			const note: Note = (path, offset, bytes, error) => {
				const isError = error !== undefined;
				const args = { path, offset, bytes };
				deps.audit({ id: crypto.randomUUID(), sid, phase: "done", tool, isError, args, ...(isError ? { error } : {}) });
			};
			const refuse: Refuse = (path, offset, code, message, h) => {
				note(path, offset, 0, message);
				return blobError(code, message, h);
			};
			const ctx: Ctx = { note, refuse, log: deps.log };
			const params = requestTarget(req.url).searchParams;
			const query = parseBlobQuery(params, req.method);
			if (!query.ok) return refuse(params.get("path"), null, query.code, query.message);
			const path = resolveBlobPath(query.value.path, { home: deps.home(), cwd: deps.cwd() });
			const offset = query.value.offset;
			if (req.method !== "POST") return download(req, path, ctx);
			if (req.body === null || req.headers.get("content-length") === "0") {
				return refuse(path, offset, "empty_body", EMPTY_BODY);
			}
			if (uploading.has(path)) return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
			if (uploading.size >= MAX_UPLOADS_IN_FLIGHT) {
				return refuse(
					path,
					offset,
					"too_many_uploads",
					`${MAX_UPLOADS_IN_FLIGHT} uploads are in progress; retry later`,
				);
			}
			uploading.add(path);
			try {
				return await upload(req, path, offset, ctx);
			} finally {
				uploading.delete(path);
			}
		},
	};
}

const EMPTY_BODY = "the request body is empty: nothing to write";

function statOrNull(path: string): Stats | null {
	try {
		return statSync(path);
	} catch (err) {
		if (errno(err) === "ENOENT" || errno(err) === "ENOTDIR") return null;
		throw err;
	}
}

/** Checks `offset` against the size before and after opening, then appends chunk by chunk. */
/** Checks `offset` against the size before and after opening, then appends the body as it arrives. */
async function upload(req: Request, path: string, offset: number | null, ctx: Ctx): Promise<Response> {
	const { refuse } = ctx;
	const mismatch = (size: number) =>
		refuse(path, offset, "offset_mismatch", `offset ${offset} does not match the current size ${size} of ${path}`);
	const cannot = (err: unknown) =>
		refuse(path, offset, "write_failed", `cannot write ${path}: ${osReason(err)}; 0 bytes landed`);
	let st: Stats | null;
	try {
		st = statOrNull(path);
	} catch (err) {
		return cannot(err);
	}
	if (st?.isDirectory()) return refuse(path, offset, "is_directory", `${path} is a directory`);
	if (offset !== null && offset !== (st?.size ?? 0)) return mismatch(st?.size ?? 0);
	let fd: number;
	let madeDir: string | undefined;
	try {
		madeDir = mkdirSync(dirname(path), { recursive: true });
		fd = openSync(path, "a+");
	} catch (err) {
		return cannot(err);
	}
	try {
		const at = fstatSync(fd).size;
		if (offset !== null && offset !== at) return mismatch(at);
		// A device or FIFO has no size to read back: it is written and hashed chunk by chunk instead.
		const result = st === null || st.isFile() ? await pipeBody(req, fd, at) : await writeChunks(req, fd);
		const { stop, landed } = result;
		if (stop === null && landed === 0) {
			// A chunked body that carried nothing: undo what this request created.
			if (st === null) undoCreate(path, madeDir);
			return refuse(path, offset, "empty_body", EMPTY_BODY);
		}
		if (stop === null) {
			ctx.note(path, at, landed);
			const size = fstatSync(fd).size;
			return json(
				{ path, offset: at, written: landed, size, sha256: result.sha256 ?? (await hashRange(fd, at, landed)) },
				200,
			);
		}
		const failed = stop.code === "write_failed";
		const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${landed} bytes of this request landed at offset ${at} (file size now ${at + landed})`;
		if (failed) ctx.log(`a2a-bridge: blob ${message}`);
		ctx.note(path, at, landed, failed ? message : "client disconnected");
		return blobError(stop.code, message);
	} finally {
		closeSync(fd);
	}
}

type Stop = { code: "write_failed" | "client_disconnected"; why: string } | null;
interface Written {
	stop: Stop;
	landed: number;
	/** Set when hashed on the way in; otherwise the appended range is read back. */
	sha256?: string;
}

/** File-system errors carry an errno code ("ENOSPC"); a dropped connection does not. */
function classify(err: unknown): Exclude<Stop, null> {
	const code = errno(err);
	if (typeof code === "string" && code.startsWith("E")) return { code: "write_failed", why: osReason(err) };
	return { code: "client_disconnected", why: "client disconnected" };
}

/**
 * Bun pipes the body to the file natively: no chunk passes through the JS heap. Inside the host a JS
 * chunk loop with `writeSync` let peak RSS grow past 100 MiB; this stayed flat (docs/performance.md).
 * A large body is hashed by a worker reading behind the writer; a small one is read back afterwards.
 */
async function pipeBody(req: Request, fd: number, at: number): Promise<Written> {
	const declared = Number(req.headers.get("content-length") ?? Number.NaN);
	const follower = declared < FOLLOW_MIN_BYTES ? null : followHash(fd, at);
	let stop: Stop = null;
	try {
		await Bun.write(Bun.file(fd), req);
	} catch (err) {
		stop = classify(err);
	}
	const landed = fstatSync(fd).size - at;
	if (follower === null) return { stop, landed };
	if (stop !== null || landed === 0) {
		await follower.cancel();
		return { stop, landed };
	}
	const sha256 = await follower.finish(at + landed);
	return sha256 === null ? { stop, landed } : { stop, landed, sha256 };
}

/** Each chunk written synchronously (counting what the OS took) and hashed on the way. */
async function writeChunks(req: Request, fd: number): Promise<Written> {
	const hash = new Bun.CryptoHasher("sha256");
	let landed = 0;
	try {
		for await (const chunk of req.body ?? []) {
			for (let off = 0; off < chunk.byteLength; ) {
				const n = writeSync(fd, chunk, off, chunk.byteLength - off);
				hash.update(chunk.subarray(off, off + n));
				off += n;
				landed += n;
			}
		}
	} catch (err) {
		return { stop: classify(err), landed };
	}
	return { stop: null, landed, sha256: hash.digest("hex") };
}

function undoCreate(path: string, madeDir: string | undefined): void {
	try {
		unlinkSync(path);
		for (let dir = dirname(path); madeDir && dir.length >= madeDir.length; dir = dirname(dir)) rmdirSync(dir);
	} catch {
		// Best effort: something else may have put files there meanwhile.
	}
}

function download(req: Request, path: string, { note, refuse }: Ctx): Response {
	let st: Stats | null;
	try {
		st = statOrNull(path);
		// Opened once up front so that a permission error is a clear 500, not a cut-off stream.
		if (st?.isFile()) closeSync(openSync(path, "r"));
	} catch (err) {
		return refuse(path, null, "read_failed", `cannot read ${path}: ${osReason(err)}`);
	}
	if (st === null) return refuse(path, null, "not_found", `${path} does not exist`);
	if (st.isDirectory()) return refuse(path, null, "is_directory", `${path} is a directory`);
	if (!st.isFile()) return refuse(path, null, "not_a_file", `${path} is not a regular file`);
	const size = st.size;
	const range = parseRange(req.headers.get("range"), size);
	if (!range.ok) return refuse(path, null, range.code, range.message, { "content-range": `bytes */${size}` });
	const { start, end } = range.value ?? { start: 0, end: size - 1 };
	const length = end - start + 1;
	const headers: Record<string, string> = {
		"content-type": "application/octet-stream",
		"content-length": String(length),
		"accept-ranges": "bytes",
	};
	if (range.value) headers["content-range"] = `bytes ${start}-${end}/${size}`;
	note(path, start, req.method === "HEAD" ? 0 : length);
	// Slicing pins the length to the size seen above even if the file grows while it streams.
	const body = req.method === "HEAD" ? null : Bun.file(path).slice(start, end + 1, "application/octet-stream");
	return new Response(body, { status: range.value ? 206 : 200, headers });
}
