/**
 * `POST /blob`: the body is appended to the file as it arrives. An upload never truncates, lands at
 * the file's current end, and reports this request's bytes and their sha256. Only regular files are
 * written (blob/target.ts); one upload per file (blob/locks.ts); a stalled sender is cut off
 * (blob/stall.ts). The connection's idle timer is off while the body streams.
 */
import { closeSync, fstatSync, mkdirSync, rmdirSync, type Stats, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { closeSoon, holdOpen } from "../core/idle.ts";
import { type Ctx, errno, osReason, statOrNull } from "./context.ts";
import { FOLLOW_MIN_BYTES, followHash, hashRange } from "./hash.ts";
import type { FileLocks } from "./locks.ts";
import { blobError, json } from "./parse.ts";
import { stallMs, watchStall } from "./stall.ts";
import { openTarget } from "./target.ts";

export const EMPTY_BODY = "the request body is empty: nothing to write";

/** Checks `offset` against the size before and after opening, then appends the body as it arrives. */
export async function upload(
	req: Request,
	path: string,
	offset: number | null,
	ctx: Ctx,
	locks: FileLocks,
): Promise<Response> {
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
	let madeDir: string | undefined;
	try {
		madeDir = mkdirSync(dirname(path), { recursive: true });
	} catch (err) {
		return cannot(err);
	}
	const opened = openTarget(path, "append");
	if (!opened.ok) {
		const message = opened.code === "write_failed" ? `${opened.message}; 0 bytes landed` : opened.message;
		return refuse(path, offset, opened.code, message);
	}
	const { fd } = opened;
	const unlock = locks.take(opened.st);
	if (unlock === null) {
		closeSync(fd);
		return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
	}
	const release = holdOpen(req);
	try {
		const at = fstatSync(fd).size;
		if (offset !== null && offset !== at) return mismatch(at);
		const { stop, landed, wrote, sha256 } = await pipeBody(req, fd, at);
		if (stop === null && landed === 0 && wrote === 0) {
			// A chunked body that carried nothing: undo what this request created.
			if (st === null) undoCreate(path, madeDir);
			return refuse(path, offset, "empty_body", EMPTY_BODY);
		}
		if (stop === null && wrote !== landed) {
			const message = `${path} changed by ${landed - wrote} bytes more than this upload wrote (${wrote} bytes at offset ${at}): another writer touched it meanwhile; no sha256 given`;
			ctx.note(path, at, landed, message);
			return blobError("file_changed", message);
		}
		if (stop === null) {
			ctx.note(path, at, landed);
			const size = fstatSync(fd).size;
			const digest = sha256 ?? (await hashRange(fd, at, landed));
			return json({ path, offset: at, written: landed, size, sha256: digest }, 200);
		}
		const failed = stop.code === "write_failed";
		const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${landed} bytes of this request landed at offset ${at} (file size now ${at + landed})`;
		if (failed) ctx.log(`a2a-bridge: blob ${message}`);
		ctx.note(path, at, landed, failed ? message : stop.why);
		return blobError(stop.code, message);
	} finally {
		closeSync(fd);
		unlock();
		release();
	}
}

type Stop = { code: "write_failed" | "client_disconnected"; why: string } | null;
interface Written {
	stop: Stop;
	/** How much the file grew. */
	landed: number;
	/** How much this request wrote, as Bun counted it (-1 when the pipe broke). */
	wrote: number;
	/** Set when hashed on the way in; otherwise the appended range is read back. */
	sha256?: string;
}

/** File-system errors carry an errno code ("ENOSPC"); a dropped connection does not. */
function classify(err: unknown, stalledFor: number | null): Exclude<Stop, null> {
	const code = errno(err);
	if (typeof code === "string" && code.startsWith("E")) return { code: "write_failed", why: osReason(err) };
	if (stalledFor !== null) {
		return { code: "client_disconnected", why: `client stalled (no byte for ${stalledFor / 1000} s)` };
	}
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
	const bound = stallMs();
	const watch = watchStall(fd, bound, () => closeSoon(req));
	let stop: Stop = null;
	let wrote = -1;
	try {
		wrote = await Bun.write(Bun.file(fd), req);
	} catch (err) {
		stop = classify(err, watch.stalled ? bound : null);
	} finally {
		watch.stop();
	}
	const landed = fstatSync(fd).size - at;
	if (follower === null) return { stop, landed, wrote };
	if (stop !== null || landed === 0 || wrote !== landed) {
		await follower.cancel();
		return { stop, landed, wrote };
	}
	const sha256 = await follower.finish(at + landed);
	return sha256 === null ? { stop, landed, wrote } : { stop, landed, wrote, sha256 };
}

function undoCreate(path: string, madeDir: string | undefined): void {
	try {
		unlinkSync(path);
		for (let dir = dirname(path); madeDir && dir.length >= madeDir.length; dir = dirname(dir)) rmdirSync(dir);
	} catch {
		// Best effort: something else may have put files there meanwhile.
	}
}
