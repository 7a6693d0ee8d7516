/**
 * Where a `PUT` collects its body before the rename (contract §7, §19): a staging file beside the target
 * (same directory, so the rename is atomic), 0600, its name unique to one PUT in one process, so two
 * bridges writing one path never share a file and each renames only the file it wrote. Names:
 * in flight `.a2a-staging-<target tag>-<random>.<pid>`; parked (a cut PUT, to be continued with
 * `offset=`) the same without `.<pid>`. A resume claims a parked file by renaming it to its own
 * in-flight name (one claimant wins). Cleaning touches only these shapes, made by this user, 0600,
 * one link, and never a file in flight in a live process; targets with staging-shaped names are
 * refused (blob/own.ts), so a target and a staging file never collide.
 */
import { createHash, randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fchmodSync,
	fchownSync,
	fstatSync,
	linkSync,
	lstatSync,
	openSync,
	readdirSync,
	readlinkSync,
	realpathSync,
	renameSync,
	type Stats,
	unlinkSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { errorText } from "../text/error-text.ts";
import { errno } from "./context.ts";
import type { BlobCode } from "./parse.ts";

export const STAGING_PREFIX = ".a2a-staging-";
/** tag (32 hex of the target path's SHA-256), random part, and the pid while in flight. */
const NAME = /^\.a2a-staging-([0-9a-f]{32})-([0-9a-f]{16})(?:\.([1-9][0-9]{0,9}))?$/;
/** Staging files older than this are removed by the next PUT into their directory. */
const STAGING_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** At most this many parked staging files stay in one directory (the oldest go first). @internal */
export const STAGING_MAX_PER_DIR = 8;
const MAX_LINK_HOPS = 40;
const CREATE_TRIES = 4;

const STAGE = constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The staging files this process has in flight: nobody else may clean or claim them. */
const inFlight = new Set<string>();

/**
 * The file a write to `path` reaches: symlinks are followed (even dangling), so a PUT replaces the file
 * a link points to and the link stays. `linked` says a link was followed.
 */
export function replaceTarget(path: string): { target: string; linked: boolean } {
	let at = path;
	let hop = 0;
	for (; hop < MAX_LINK_HOPS; hop++) {
		let st: Stats;
		try {
			st = lstatSync(at);
		} catch {
			break;
		}
		if (!st.isSymbolicLink()) break;
		at = resolve(dirname(at), readlinkSync(at));
	}
	// The directory may itself be reached through links: name the staging file by the real one.
	try {
		return { target: join(realpathSync(dirname(at)), basename(at)), linked: hop > 0 };
	} catch {
		return { target: at, linked: hop > 0 };
	}
}

const tagOf = (target: string): string => createHash("sha256").update(target).digest("hex").slice(0, 32);

/** A fresh in-flight name for `target` in this process. @internal */
export const inFlightName = (target: string): string =>
	join(dirname(target), `${STAGING_PREFIX}${tagOf(target)}-${randomBytes(8).toString("hex")}.${process.pid}`);

/** The parked name of an in-flight one (the pid dropped). */
const parkedName = (path: string): string => path.replace(/\.[0-9]+$/, "");

/** Only a file a bridge could have made: regular, one name, this user's, 0600. */
const isOurs = (st: Stats): boolean =>
	st.isFile() && st.nlink === 1 && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o600;

function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return errno(err) === "EPERM";
	}
}

/** In flight in a live process (this one, or another whose pid still runs): not to be touched. */
function busy(path: string, pid: string | undefined): boolean {
	if (pid === undefined) return false;
	if (Number(pid) === process.pid) return inFlight.has(path);
	return pidAlive(Number(pid));
}

interface Staged {
	path: string;
	tag: string;
	size: number;
	mtime: number;
}

/** This bridge's staging files in `dir` that no live upload holds (parked, or left by a dead process). */
function idle(dir: string): Staged[] {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return [];
	}
	const out: Staged[] = [];
	for (const name of names) {
		const m = NAME.exec(name);
		if (m === null) continue;
		const path = join(dir, name);
		if (busy(path, m[3])) continue;
		try {
			const st = lstatSync(path);
			if (isOurs(st)) out.push({ path, tag: m[1] as string, size: st.size, mtime: st.mtimeMs });
		} catch {
			// Gone meanwhile.
		}
	}
	return out;
}

const forTarget = (target: string): Staged[] =>
	idle(dirname(target))
		.filter(s => s.tag === tagOf(target))
		.sort((a, b) => b.mtime - a.mtime);

/** The staged size a resume of `target` continues (its newest parked file), or null when nothing is staged. */
export function stagedSize(target: string): number | null {
	return forTarget(target)[0]?.size ?? null;
}

const unlinkQuietly = (path: string): void => {
	try {
		unlinkSync(path);
	} catch {
		// Gone already.
	}
};

export interface StagingFile {
	fd: number;
	st: Stats;
	path: string;
}
type Opened =
	| { ok: true; value: StagingFile }
	| { ok: false; code: BlobCode; message: string }
	| { ok: false; code: "offset_mismatch"; message: string; size: number };

/**
 * Opens a staging file for `target`: `offset` null or 0 starts afresh (earlier idle staging files of the
 * target go, a new unique one is created with O_EXCL, so nothing planted is written through or in the
 * way); a number claims a parked file of exactly that size.
 */
export function openStaging(target: string, offset: number | null): Opened {
	if (offset === null || offset === 0) {
		for (const s of forTarget(target)) unlinkQuietly(s.path);
		return create(target);
	}
	const mismatch = (size: number) => ({
		ok: false as const,
		code: "offset_mismatch" as const,
		size,
		message:
			size === 0
				? `offset ${offset} does not match the 0 bytes staged for this file (nothing is staged)`
				: `offset ${offset} does not match the ${size} bytes staged for this file`,
	});
	const staged = forTarget(target);
	for (const s of staged.filter(c => c.size === offset)) {
		const mine = inFlightName(target);
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

function create(target: string): Opened {
	let last: unknown;
	for (let i = 0; i < CREATE_TRIES; i++) {
		const path = inFlightName(target);
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
		message: `cannot stage the upload in ${dirname(target)}: ${errorText(last)}`,
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

/**
 * Removes this bridge's idle staging files in `dir` older than STAGING_MAX_AGE_MS, then the oldest beyond
 * STAGING_MAX_PER_DIR. Files of other shapes, other users, other modes or in flight anywhere stay.
 */
export function cleanStaging(dir: string): void {
	const now = Date.now();
	const left: Staged[] = [];
	for (const s of idle(dir)) {
		if (now - s.mtime > STAGING_MAX_AGE_MS) unlinkQuietly(s.path);
		else left.push(s);
	}
	left.sort((a, b) => a.mtime - b.mtime);
	for (const s of left.slice(0, Math.max(0, left.length - STAGING_MAX_PER_DIR))) unlinkQuietly(s.path);
}
