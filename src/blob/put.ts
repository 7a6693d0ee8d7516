/**
 * `PUT /blob`: atomic replace (contract §7). The body goes to a staging file beside the target
 * (blob/staging.ts); only a body that arrived whole, and matches any digest given, is fsynced, given the
 * old file's mode (and owner where the host can) and renamed over it. A cut leaves the staged bytes for
 * `offset=<staged size>`; a refused or failed one removes them. The target itself is never opened for write.
 */
import { closeSync, fstatSync, fsyncSync, type Stats } from "node:fs";
import type { Ctx } from "./context.ts";
import { contentKey } from "./digest-cache.ts";
import { heldElsewhere } from "./flock.ts";
import { install, lockedElsewhere, type Placed } from "./install.ts";
import { type FileLocks, inodeKey } from "./locks.ts";
import { blobError } from "./parse.ts";
import { dirAt, inDir, make, type Place, shown, unmake } from "./place.ts";
import { cleanStaging } from "./staged.ts";
import { discard, openStaging, park, type StagingFile } from "./staging.ts";
import { openTarget } from "./target.ts";
import {
	digestMismatch,
	digestsAfter,
	type Expected,
	mismatchReply,
	pipeBody,
	type Stop,
	uploadReply,
} from "./upload.ts";

/** The file being replaced, checked like any target (regular, not a pseudo-file); null when new. */
function existing(place: Place, ctx: Ctx, path: string, offset: number | null): Stats | null | Response {
	const { target } = place;
	if (place.missing.length > 0) return null;
	const opened = openTarget(inDir(place.dir, place.name), "replace", target);
	if (!opened.ok) {
		if (opened.code === "not_found") return null;
		const code = opened.code === "read_failed" ? "write_failed" : opened.code;
		return ctx.refuse(path, offset, code, opened.why);
	}
	closeSync(opened.fd);
	if (opened.pseudo !== null) {
		const why = `${target} is not a regular file (a ${opened.pseudo} pseudo-file); /blob reads and writes regular files only`;
		return ctx.refuse(path, offset, "not_regular_file", why);
	}
	return opened.st;
}

/** One PUT while it holds its locks: where it writes (its directory held), what it replaces, its staging file once open. */
interface Replace {
	path: string;
	place: Place;
	old: Stats | null;
	file: StagingFile | null;
}

/** A refused or failed PUT leaves nothing: its staging file and the directories it made go. */
function drop(r: Replace): void {
	if (r.file !== null) discard(r.file);
	if (r.old === null) unmake(r.place);
}

export async function put(
	req: Request,
	path: string,
	offset: number | null,
	expected: Expected,
	ctx: Ctx,
	locks: FileLocks,
	place: Place,
): Promise<Response> {
	const { refuse } = ctx;
	const { target } = place;
	const old = existing(place, ctx, path, offset);
	if (old instanceof Response) return old;
	const r: Replace = { path, place, old, file: null };
	try {
		make(place);
	} catch (err) {
		drop(r);
		return refuse(path, offset, "write_failed", `cannot write ${path}: ${shown(err)}; this upload changed nothing`);
	}
	// In this process one upload per target at a time; across processes each PUT has its own staging file.
	const keys = old === null ? [`target:${target}`] : [`target:${target}`, inodeKey(old)];
	const unlock = locks.takeAll(keys);
	if (unlock === null) {
		drop(r);
		return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
	}
	try {
		if (old !== null && lockedElsewhere(inDir(place.dir, place.name), locks.across, ctx.log)) {
			return refuse(path, offset, "upload_in_progress", heldElsewhere(path));
		}
		cleanStaging(dirAt(place.dir));
		const opened = openStaging(target, offset, dirAt(place.dir));
		if (!opened.ok) {
			if (!("size" in opened)) return refuse(path, offset, opened.code, opened.why);
			const staged = { "upload-offset": String(opened.size) };
			return refuse(path, offset, opened.code, opened.why, staged, { staged: opened.size });
		}
		r.file = opened.value;
		return await receive(req, r, r.file, expected, ctx, locks);
	} finally {
		if (r.file !== null) closeSync(r.file.fd);
		unlock();
	}
}

/** The body into the staging file (no wait before it: blob/upload.ts), then checked and installed. */
async function receive(
	req: Request,
	r: Replace,
	file: StagingFile,
	expected: Expected,
	ctx: Ctx,
	locks: FileLocks,
): Promise<Response> {
	const { path } = r;
	const at = file.st.size;
	const w = await pipeBody(req, file.fd, at, ctx, true);
	const { stop, landed, wrote } = w;
	if (stop !== null) return stopped(r, file, at, landed, stop, ctx);
	if (wrote !== landed) {
		drop(r);
		const message = `the staging file for ${path} changed by ${landed - wrote} bytes more than this upload wrote: another writer touched it; nothing was kept and this upload did not change ${path}`;
		ctx.note(path, at, 0, message);
		return blobError("file_changed", message);
	}
	const got = digestsAfter(w);
	const wrong = digestMismatch(expected, got);
	if (wrong !== null) {
		drop(r);
		ctx.note(path, at, 0, `${wrong}; this upload did not change ${path}`);
		return mismatchReply(`${wrong}; nothing was kept: this upload did not change ${path}`, got);
	}
	const { place } = r;
	let placed: Placed;
	try {
		fsyncSync(file.fd);
		const at = inDir(place.dir, place.name);
		placed = await install(file, at, place.target, r.old, locks.across, ctx.log);
	} catch (err) {
		drop(r);
		const message = `cannot replace ${place.target}: ${shown(err, place.dir)}; nothing was kept and this upload did not change ${path}`;
		ctx.log(`a2a-bridge: blob ${message}`);
		ctx.note(path, at, 0, message);
		return blobError("write_failed", message);
	}
	if (placed !== "done") return unplaced(file, path, at, landed, placed, ctx);
	syncDir(place.dir.fd);
	ctx.digests.remember(contentKey(file.fd), got.whole);
	ctx.note(path, at, landed);
	return uploadReply(path, at, landed, fstatSync(file.fd).size, got, place.linked ? { target: place.target } : {});
}

/** The rename is done; a directory that cannot be synced only loses durability. */
function syncDir(fd: number): void {
	try {
		fsyncSync(fd);
	} catch {
		// As said.
	}
}

/** A body cut short: its bytes stay staged for `offset=` (a failed write keeps nothing). */
function stopped(
	r: Replace,
	file: StagingFile,
	at: number,
	landed: number,
	stop: NonNullable<Stop>,
	ctx: Ctx,
): Response {
	const { path } = r;
	const failed = stop.code === "write_failed";
	let kept = `${at + landed} bytes are staged and this upload did not change ${path}; continue with PUT …&offset=${at + landed}`;
	if (failed) {
		drop(r);
		kept = `nothing was kept and this upload did not change ${path}`;
	} else if (!park(file)) kept = `this upload did not change ${path}; its staged bytes could not be kept`;
	const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${kept}`;
	if (failed) ctx.log(`a2a-bridge: blob ${message}`);
	// The record counts the bytes kept: staged ones for a resume, none after a failed write.
	ctx.note(path, at, failed ? 0 : landed, failed ? message : stop.why);
	return blobError(stop.code, message);
}

/** A whole, checked body the target's place refused (locked elsewhere, changed): it stays staged. */
function unplaced(
	file: StagingFile,
	path: string,
	at: number,
	landed: number,
	placed: Exclude<Placed, "done">,
	ctx: Ctx,
): Response {
	// An empty PUT with offset finishes it later.
	const size = at + landed;
	const parked = park(file);
	const kept = parked
		? `its ${size} bytes are staged: PUT …&offset=${size} with an empty body finishes it`
		: "its staged bytes could not be kept";
	const message = `${placed.why}; this upload did not change ${path}, ${kept}`;
	ctx.note(path, at, parked ? landed : 0, message);
	return blobError(placed.code, message);
}
