/**
 * `POST /blob`: append or resume (contract §7). With `offset` it must equal the size; without one only a
 * missing or empty file is written (a non-empty one → 409 `file_exists`: PUT replaces, `offset` appends).
 * Never truncates, except to undo a body whose digest does not match. One upload per file, in this process
 * and across processes (blob/locks.ts): two bridges appending to one file never mix their bytes.
 */
import { closeSync, fstatSync, ftruncateSync, lstatSync, type Stats, unlinkSync } from "node:fs";
import { type Ctx, statOrNull } from "./context.ts";
import { contentKey } from "./digest-cache.ts";
import { heldElsewhere } from "./flock.ts";
import { type FileLocks, inodeKey } from "./locks.ts";
import { ownTwin } from "./own.ts";
import { blobError } from "./parse.ts";
import { inDir, make, type Place, shown, unmake } from "./place.ts";
import { openTarget } from "./target.ts";
import {
	digestMismatch,
	digestsAfter,
	EMPTY_BODY,
	type Expected,
	mismatchReply,
	pipeBody,
	uploadReply,
	type Written,
} from "./upload.ts";

/** Checks `offset` against the size before and after opening, then appends the body as it arrives. */
export async function post(
	req: Request,
	path: string,
	offset: number | null,
	expected: Expected,
	ctx: Ctx,
	locks: FileLocks,
	place: Place,
): Promise<Response> {
	const { refuse } = ctx;
	const mismatch = (size: number) =>
		refuse(path, offset, "offset_mismatch", `offset ${offset} does not match the current size ${size} of ${path}`);
	const exists = (size: number) =>
		refuse(
			path,
			offset,
			"file_exists",
			`${path} exists (${size} bytes); POST without offset never appends: PUT /blob?path=… replaces it, POST with offset=${size} appends or resumes`,
			{},
			{ size },
		);
	const cannot = (err: unknown) =>
		refuse(path, offset, "write_failed", `cannot write ${path}: ${shown(err, place.dir)}; 0 bytes landed`);
	let st: Stats | null;
	try {
		st = place.missing.length > 0 ? null : statOrNull(inDir(place.dir, place.name));
	} catch (err) {
		return cannot(err);
	}
	if (st?.isDirectory()) return refuse(path, offset, "is_directory", `${path} is a directory`);
	if (offset !== null && offset !== (st?.size ?? 0)) return mismatch(st?.size ?? 0);
	try {
		make(place);
	} catch (err) {
		unmake(place);
		return cannot(err);
	}
	const held = openLocked(path, offset, ctx, locks, place);
	if (held instanceof Response) {
		if (st === null) unmake(place);
		return held;
	}
	const { fd } = held;
	try {
		const at = fstatSync(fd).size;
		if (offset === null && at > 0) return exists(at);
		if (offset !== null && offset !== at) return mismatch(at);
		const w = await pipeBody(req, fd, at, ctx);
		return await settle({ path, offset, fd, at, created: st === null, place }, w, expected, ctx);
	} finally {
		held.release();
	}
}

/** One append once its body is in: the file, where the body began, and what this request created. */
interface Append {
	path: string;
	offset: number | null;
	fd: number;
	at: number;
	/** The file did not exist before: undoing removes it (and the directories made for it). */
	created: boolean;
	/** Where it is: its directory held open (blob/place.ts). */
	place: Place;
}

/** What the body comes to: nothing, a file another writer touched, a digest refused (undone), landed, or cut. */
async function settle(a: Append, w: Written, expected: Expected, ctx: Ctx): Promise<Response> {
	const { path, fd, at } = a;
	const { stop, landed, wrote } = w;
	if (stop === null && landed === 0 && wrote === 0) {
		// A chunked body that carried nothing: undo what this request created.
		if (a.created) undoCreate(a.place);
		return ctx.refuse(path, a.offset, "empty_body", EMPTY_BODY);
	}
	if (stop === null && wrote !== landed) {
		const message = `${path} changed by ${landed - wrote} bytes more than this upload wrote (${wrote} bytes at offset ${at}): another writer touched it meanwhile; no sha256 given`;
		ctx.note(path, at, landed, message);
		return blobError("file_changed", message);
	}
	if (stop === null) {
		const got = digestsAfter(w);
		const wrong = digestMismatch(expected, got);
		if (wrong !== null) {
			if (a.created) undoCreate(a.place);
			else ftruncateSync(fd, at);
			ctx.note(path, at, 0, `${wrong}; the file is back to its ${at} bytes`);
			return mismatchReply(`${wrong}; nothing was kept: the file is back to its ${at} bytes`, got);
		}
		ctx.note(path, at, landed);
		ctx.digests.remember(contentKey(fd), got.whole);
		return uploadReply(path, at, landed, fstatSync(fd).size, got);
	}
	const failed = stop.code === "write_failed";
	const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${landed} bytes of this request landed at offset ${at} (file size now ${at + landed})`;
	if (failed) ctx.log(`a2a-bridge: blob ${message}`);
	ctx.note(path, at, landed, failed ? message : stop.why);
	return blobError(stop.code, message);
}

/** Times a file replaced while this upload took its lock is opened again. */
const OPEN_TRIES = 3;

/**
 * Opens `path` for appending and takes its locks: this process's (refused at once when held) and then the
 * flock other processes take (blob/flock.ts). A file replaced under the name between the open and the lock
 * (a PUT in another bridge) is not the file `path` names: it is opened again.
 */
function openLocked(
	path: string,
	offset: number | null,
	ctx: Ctx,
	locks: FileLocks,
	place: Place,
): { fd: number; release(): void } | Response {
	const { refuse } = ctx;
	const { target } = place;
	const at = inDir(place.dir, place.name);
	for (let tries = 1; ; tries++) {
		const opened = openTarget(at, "append", path);
		if (!opened.ok) {
			const message = opened.code === "write_failed" ? `${opened.why}; 0 bytes landed` : opened.why;
			return refuse(path, offset, opened.code, message);
		}
		const { fd } = opened;
		// The name the walk checked may since hold a second name of an own file (a hard link).
		const twin = ownTwin(place.own, path, opened.st);
		if (twin !== null) {
			closeSync(fd);
			return refuse(path, offset, "own_file", `${twin}: /blob does not write it`);
		}
		const unlock = locks.takeAll([`target:${target}`, inodeKey(opened.st)]);
		if (unlock === null) {
			closeSync(fd);
			return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
		}
		// No waiting: the body must start to land before this handler first yields (blob/upload.ts).
		const across = locks.across.tryTake(fd, ctx.log);
		const release = () => {
			if (across.kind === "held") across.release();
			closeSync(fd);
			unlock();
		};
		if (across.kind === "busy") {
			release();
			const why = heldElsewhere(path);
			return refuse(path, offset, "upload_in_progress", why);
		}
		if (across.kind === "failed") {
			release();
			return refuse(path, offset, "write_failed", `cannot lock ${path}: ${across.why}; 0 bytes landed`);
		}
		if (sameFile(at, fd)) return { fd, release };
		release();
		if (tries === OPEN_TRIES) {
			const why = `${path} was replaced ${OPEN_TRIES} times while this upload took its lock; 0 bytes landed`;
			return refuse(path, offset, "file_changed", why);
		}
	}
}

/** Whether `at` still names the open file (a rename by another process may have replaced it). */
function sameFile(at: string, fd: number): boolean {
	try {
		const named = lstatSync(at);
		const own = fstatSync(fd);
		return named.dev === own.dev && named.ino === own.ino;
	} catch {
		return false;
	}
}

function undoCreate(place: Place): void {
	try {
		unlinkSync(inDir(place.dir, place.name));
	} catch {
		// Best effort: something else may have put files there meanwhile.
	}
	unmake(place);
}
