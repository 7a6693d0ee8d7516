/**
 * Putting a PUT's staging file, whole and checked, in the target's place (contract §7, §19): under the
 * lock of the file it replaces (blob/flock.ts), so an append in another bridge never writes into a file
 * this PUT unlinks; a missing target by a link that fails when one appeared meanwhile; with the old
 * file's owner and mode.
 */
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { errno } from "./context.ts";
import { type CrossLocks, heldElsewhere, LOCK_WAIT_MS } from "./flock.ts";
import type { BlobCode } from "./parse.ts";
import { commit, commitNew, type StagingFile } from "./staging.ts";

/** The file under the target's name, opened only to lock it: never a link, never waiting on a FIFO. */
const CURRENT = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Gives the new file the old one's owner (root, or a group this user may set) and mode. */
function keepMetadata(fd: number, old: Stats | null): void {
	if (old === null) {
		fchmodSync(fd, 0o666 & ~process.umask());
		return;
	}
	const uid = process.geteuid?.() ?? -1;
	try {
		if (uid === 0) fchownSync(fd, old.uid, old.gid);
		else if (old.uid === uid) fchownSync(fd, uid, old.gid);
	} catch {
		// Not allowed (another user's file, a group this user is not in): the new file stays ours.
	}
	fchmodSync(fd, old.mode & 0o7777);
}

/**
 * Whether an upload in another process holds the target: then the PUT is refused before its body. One
 * try, no waiting: the body must start to land before the handler first yields (blob/upload.ts).
 */
export function lockedElsewhere(at: string, across: CrossLocks, log: (line: string) => void): boolean {
	let fd: number;
	try {
		fd = openSync(at, CURRENT);
	} catch {
		return false;
	}
	try {
		const lock = across.tryTake(fd, log);
		if (lock.kind === "held") lock.release();
		return lock.kind === "busy";
	} finally {
		closeSync(fd);
	}
}

export type Placed = "done" | { code: BlobCode; why: string };
/** Times the file under the target's name is looked at again when it changed while this PUT waited. */
const INSTALL_TRIES = 3;

/**
 * Puts the staging file in the target's place under the lock of the file it replaces (blob/flock.ts), so
 * an append in another bridge never writes into a file this PUT unlinks, nor reports it as the target.
 * A missing target is created by a link that fails when one appeared meanwhile: that one is locked first.
 * Just before, the staging file gets `old`'s owner and mode (no `old`: a new file's mode). `at` is the
 * target's name inside its held directory (blob/place.ts), `target` the path messages show.
 */
export async function install(
	file: StagingFile,
	at: string,
	target: string,
	old: Stats | null,
	across: CrossLocks,
	log: (line: string) => void,
): Promise<Placed> {
	const ready = () => keepMetadata(file.fd, old);
	const replace = (): "done" => {
		ready();
		commit(file, at);
		return "done";
	};
	for (let tries = 0; tries < INSTALL_TRIES; tries++) {
		let fd: number;
		try {
			fd = openSync(at, CURRENT);
		} catch (err) {
			if (errno(err) !== "ENOENT") {
				// A link or something else unopenable under the name: no file's bytes are lost by replacing it.
				return replace();
			}
			ready();
			if (commitNew(file, at)) return "done";
			continue;
		}
		try {
			if (!fstatSync(fd).isFile()) return replace();
			const lock = await across.take(fd, log);
			if (lock.kind === "busy") {
				const why = `${heldElsewhere(target)} for ${LOCK_WAIT_MS / 1000} s`;
				return { code: "upload_in_progress", why };
			}
			if (lock.kind === "failed") return { code: "write_failed", why: `cannot lock ${target}: ${lock.why}` };
			try {
				const named = lstatSync(at);
				const own = fstatSync(fd);
				if (named.dev !== own.dev || named.ino !== own.ino) continue;
				return replace();
			} finally {
				if (lock.kind === "held") lock.release();
			}
		} finally {
			closeSync(fd);
		}
	}
	return {
		code: "file_changed",
		why: `${target} was replaced ${INSTALL_TRIES} times while this upload waited to replace it`,
	};
}
