/**
 * Where a `PUT` collects its body before the rename (contract §7, §19): a staging file beside the target
 * (same directory, so the rename is atomic), 0600, its name unique to one PUT in one process, so two
 * bridges writing one path never share a file and each renames only the file it wrote (names and
 * cleaning: blob/staged.ts). A cut PUT parks its file for `offset=`; a resume claims a parked file by
 * renaming it to its own in-flight name (one claimant wins). Targets with staging-shaped names are
 * refused (blob/own.ts), so a target and a staging file never collide.
 */
import {
	closeSync,
	constants,
	fchmodSync,
	fchownSync,
	fstatSync,
	linkSync,
	lstatSync,
	openSync,
	renameSync,
	type Stats,
} from "node:fs";
import { dirname } from "node:path";
import type { Refused } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { errno } from "./context.ts";
import type { BlobCode } from "./parse.ts";
import { forTarget, inFlight, inFlightName, isOurs, parkedName, unlinkQuietly } from "./staged.ts";

const CREATE_TRIES = 4;

const STAGE = constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export interface StagingFile {
	fd: number;
	st: Stats;
	path: string;
}
type OpenedStaging =
	| { ok: true; value: StagingFile }
	| Refused<BlobCode>
	| (Refused<"offset_mismatch"> & { size: number });

/**
 * Opens a staging file for `target`: `offset` null or 0 starts afresh (earlier idle staging files of the
 * target go, a new unique one is created with O_EXCL, so nothing planted is written through or in the
 * way); a number claims a parked file of exactly that size. `dir` is where the files are made: the
 * target's directory, or that directory held open (blob/place.ts).
 */
export function openStaging(target: string, offset: number | null, dir = dirname(target)): OpenedStaging {
	if (offset === null || offset === 0) {
		for (const s of forTarget(target, dir)) unlinkQuietly(s.path);
		return create(target, dir);
	}
	const mismatch = (size: number) => ({
		ok: false as const,
		code: "offset_mismatch" as const,
		size,
		why:
			size === 0
				? `offset ${offset} does not match the 0 bytes staged for this file (nothing is staged)`
				: `offset ${offset} does not match the ${size} bytes staged for this file`,
	});
	const staged = forTarget(target, dir);
	for (const s of staged.filter(c => c.size === offset)) {
		const mine = inFlightName(target, dir);
		inFlight.add(mine);
		try {
			// The rename is the claim: of two resumes, one finds the parked name gone.
			renameSync(s.path, mine);
			const fd = openSync(mine, STAGE);
			const st = fstatSync(fd);
			if (isOurs(st) && st.size === offset) return { ok: true, value: { fd, st, path: mine } };
			closeSync(fd);
			renameSync(mine, s.path);
		} catch {
			// Claimed or removed by someone else: try the next.
		}
		inFlight.delete(mine);
	}
	return mismatch(staged[0]?.size ?? 0);
}

function create(target: string, dir: string): OpenedStaging {
	let last: unknown;
	for (let i = 0; i < CREATE_TRIES; i++) {
		const path = inFlightName(target, dir);
		inFlight.add(path);
		try {
			const fd = openSync(path, STAGE | constants.O_CREAT | constants.O_EXCL, 0o600);
			fchmodSync(fd, 0o600);
			return { ok: true, value: { fd, st: fstatSync(fd), path } };
		} catch (err) {
			inFlight.delete(path);
			last = err;
			if (errno(err) !== "EEXIST") break;
		}
	}
	return {
		ok: false,
		code: "write_failed",
		why: `cannot stage the upload in ${dirname(target)}: ${errorText(last).replaceAll(dir, dirname(target))}`,
	};
}

/**
 * A cut PUT: the staging file keeps its bytes under its parked name for a resume; false if it could not.
 * It is made 0600 and this user's again (a PUT that was refused at the rename had given it the target's).
 */
export function park(file: StagingFile): boolean {
	try {
		const uid = process.getuid?.() ?? -1;
		if (uid >= 0 && fstatSync(file.fd).uid !== uid) fchownSync(file.fd, uid, process.getgid?.() ?? -1);
		fchmodSync(file.fd, 0o600);
	} catch {
		// A closed descriptor: nothing gave the file other metadata.
	}
	try {
		renameSync(file.path, parkedName(file.path));
		return true;
	} catch {
		return false;
	} finally {
		inFlight.delete(file.path);
	}
}

/** A refused or failed PUT: the staging file goes. */
export function discard(file: StagingFile): void {
	unlinkQuietly(file.path);
	inFlight.delete(file.path);
}

function checkOwn(file: StagingFile): void {
	const named = lstatSync(file.path);
	const own = fstatSync(file.fd);
	if (named.dev !== own.dev || named.ino !== own.ino) {
		throw new Error(`${file.path} no longer names the file this upload wrote`);
	}
}

/**
 * Renames the staging file over `target`, after checking the name still holds the file this PUT wrote
 * (nothing else renames a live upload's staging file; this guards against anything that did).
 */
export function commit(file: StagingFile, target: string): void {
	checkOwn(file);
	renameSync(file.path, target);
	inFlight.delete(file.path);
}

/**
 * Puts the staging file at `target`, which did not exist, by a hard link that fails when a file appeared
 * there meanwhile (false: nothing changed; the caller locks that file first). A file system without hard
 * links gets a rename.
 */
export function commitNew(file: StagingFile, target: string): boolean {
	checkOwn(file);
	try {
		linkSync(file.path, target);
	} catch (err) {
		if (errno(err) === "EEXIST") return false;
		renameSync(file.path, target);
		inFlight.delete(file.path);
		return true;
	}
	unlinkQuietly(file.path);
	inFlight.delete(file.path);
	return true;
}
