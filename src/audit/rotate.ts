/**
 * Rotation of the audit log (contract §9, §19): the live file becomes `.1`, `.1` `.2`, `.2` `.3`, and `.3` is
 * dropped. Several bridges may share one path, so rotation runs under a lock on a file beside the log and
 * only if the file this writer judged full is still the live one and still full: a second rotation in a row
 * would drop a generation nobody filled. Never throws; a reason it cannot run is handed to `blocked`.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, renameSync, type Stats, statSync } from "node:fs";
import { reason } from "../config/disk.ts";

/** @internal */
export const AUDIT_GENERATIONS = 3;

/** Every file the log can be: the live one and its rotated generations `.1` to `.3`. */
export const auditGenerations = (path: string): string[] => [
	path,
	...Array.from({ length: AUDIT_GENERATIONS }, (_, i) => `${path}.${i + 1}`),
];

/** A cross-process lock on an open descriptor (the entry hands in flock(2)); the shape of blob/flock.ts's. */
export type RotationLock = (
	fd: number,
) =>
	| { kind: "held"; release(): void }
	| { kind: "busy" }
	| { kind: "unlocked"; why: string }
	| { kind: "failed"; why: string };

/** How long a writer waits for another process's rotation before writing on past the limit (it retries). */
const ROTATE_LOCK_WAIT_MS = 50;
const sleepSync = (ms: number): void => {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

function statOrNull(path: string): Stats | null {
	try {
		return statSync(path);
	} catch {
		return null;
	}
}

/** Whether the path still names the file open as `fd`. */
export function isLive(path: string, fd: number): Stats | null {
	const held = fstatSync(fd);
	const live = statOrNull(path);
	return held.nlink > 0 && live !== null && live.ino === held.ino && live.dev === held.dev ? live : null;
}

/**
 * Rotates when the live file, still the one open as `fd`, cannot take `bytes` more; false when a lock another
 * writer holds past the wait left the records in the live file (the caller tries again later).
 */
export function rotateShared(
	path: string,
	fd: number,
	bytes: number,
	maxBytes: number,
	lock: RotationLock | undefined,
	blocked: (why: string) => void,
): boolean {
	if (lock === undefined) {
		rotate(path, blocked);
		return true;
	}
	let lockFd: number;
	try {
		const flags = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
		lockFd = openSync(`${path}.lock`, flags, 0o600);
	} catch (err) {
		blocked(`its lock ${path}.lock cannot be opened (${reason(err)})`);
		return true;
	}
	try {
		const until = performance.now() + ROTATE_LOCK_WAIT_MS;
		let got = lock(lockFd);
		while (got.kind === "busy" && performance.now() < until) {
			sleepSync(1);
			got = lock(lockFd);
		}
		if (got.kind === "busy") return false;
		if (got.kind === "failed") {
			blocked(`its lock failed (${got.why})`);
			return true;
		}
		const live = isLive(path, fd);
		if (live !== null && live.size + bytes > maxBytes) rotate(path, blocked);
		if (got.kind === "held") got.release();
		return true;
	} finally {
		closeSync(lockFd);
	}
}

/** Shifts `.1`-`.3` down and the live file to `.1`; not when a generation is not a regular file (said). */
function rotate(path: string, blocked: (why: string) => void): void {
	const gens = auditGenerations(path).slice(1);
	const present = gens.map(g => {
		try {
			return lstatSync(g);
		} catch {
			return null;
		}
	});
	const odd = present.findIndex(st => st !== null && !st.isFile());
	if (odd >= 0) {
		blocked(`${gens[odd]} is not a regular file the bridge made (remove it)`);
		return;
	}
	try {
		// Oldest first, so no rename lands on a generation not yet moved; `.3` is overwritten (dropped).
		for (let g = AUDIT_GENERATIONS - 1; g >= 1; g--) {
			if (present[g - 1] !== null) renameSync(`${path}.${g}`, `${path}.${g + 1}`);
		}
		renameSync(path, `${path}.1`);
	} catch (err) {
		blocked(`a rename failed (${reason(err)})`);
	}
}
