/**
 * The staging files in a directory (blob/staging.ts makes them): their names, which of them a bridge
 * made and no live upload holds, the size a resume continues, and cleaning. Names: in flight
 * `.a2a-staging-<target tag>-<random>.<pid>`, parked the same without `.<pid>`. Only these shapes, made
 * by this user, 0600, one link, are touched, and never a file in flight in a live process.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, readdirSync, type Stats, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { observePid } from "../config/pids.ts";

export const STAGING_PREFIX = ".a2a-staging-";
/** tag (32 hex of the target path's SHA-256), random part, and the pid while in flight. */
const NAME = /^\.a2a-staging-([0-9a-f]{32})-([0-9a-f]{16})(?:\.([1-9][0-9]{0,9}))?$/;
/** Staging files older than this are removed by the next PUT into their directory. */
const STAGING_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** At most this many parked staging files stay in one directory (the oldest go first). @internal */
export const STAGING_MAX_PER_DIR = 8;

/**
 * The staging files this process has in flight, by name (unique per upload): nobody else may clean or claim
 * them, whichever held directory (blob/place.ts) another upload reaches them through.
 */
// Per process on purpose, not per server: a name carries the pid, so the process holds it, and a second
// server in this process (tests) must not clean or claim a file the first is writing.
const flying = new Set<string>();
export const inFlight = {
	add: (path: string): void => void flying.add(basename(path)),
	delete: (path: string): void => void flying.delete(basename(path)),
	has: (path: string): boolean => flying.has(basename(path)),
};

const tagOf = (target: string): string => createHash("sha256").update(target).digest("hex").slice(0, 32);

/** A fresh in-flight name for `target` in this process, in `dir` (its directory, or that directory held open). */
export const inFlightName = (target: string, dir = dirname(target)): string =>
	join(dir, `${STAGING_PREFIX}${tagOf(target)}-${randomBytes(8).toString("hex")}.${process.pid}`);

/** The parked name of an in-flight one (the pid dropped). */
export const parkedName = (path: string): string => path.replace(/\.[0-9]+$/, "");

/** Only a file a bridge could have made: regular, one name, this user's, 0600. */
export const isOurs = (st: Stats): boolean =>
	st.isFile() && st.nlink === 1 && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o600;

/** In flight in a live process (this one, or another whose pid still runs): not to be touched. */
function busy(path: string, pid: string | undefined): boolean {
	if (pid === undefined) return false;
	if (Number(pid) === process.pid) return inFlight.has(path);
	return observePid(Number(pid)).kind !== "gone";
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

/** The idle staging files of `target` in `dir` (as for inFlightName), newest first. */
export const forTarget = (target: string, dir = dirname(target)): Staged[] =>
	idle(dir)
		.filter(s => s.tag === tagOf(target))
		.sort((a, b) => b.mtime - a.mtime);

/** The staged size a resume of `target` continues (its newest parked file), or null when nothing is staged. */
export function stagedSize(target: string): number | null {
	return forTarget(target)[0]?.size ?? null;
}

export const unlinkQuietly = (path: string): void => {
	try {
		unlinkSync(path);
	} catch {
		// Gone already.
	}
};

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
