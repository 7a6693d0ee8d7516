/**
 * `POST /blob`: the body is appended to the file as it arrives. An upload never truncates, lands at
 * the file's current end, and reports this request's bytes and their sha256.
 */
import { closeSync, fstatSync, mkdirSync, openSync, rmdirSync, type Stats, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { type Ctx, errno, osReason, statOrNull } from "./context.ts";
import { FOLLOW_MIN_BYTES, followHash, hashRange } from "./hash.ts";
import { blobError, json } from "./parse.ts";

export const EMPTY_BODY = "the request body is empty: nothing to write";

/** Checks `offset` against the size before and after opening, then appends the body as it arrives. */
export async function upload(req: Request, path: string, offset: number | null, ctx: Ctx): Promise<Response> {
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
