/**
 * Disk primitives shared by the config file, the runtime record and the audit log. Invariants: a write
 * counts only when every byte landed and was synced, else it throws with the old file untouched (contract
 * §19); a replace goes through a temp file in the same directory and a rename, so a reader sees the old file
 * or the new one whole; read-modify-write cycles between processes (two hosts, `npm run token`) hold a
 * short exclusive lock (lock.ts), or, where its path holds something no bridge makes, run optimistically.
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fsyncSync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { dirname } from "node:path";

/** The OS reason of a failed call (`ENOSPC`), or its message. */
export const reason = (err: unknown): string =>
	(err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));

/**
 * Writes every byte of `data` at the descriptor's position, looping over short writes. A write that
 * takes nothing throws; the thrown error carries `written`, how many bytes landed before it.
 */
export function writeAll(fd: number, data: Uint8Array): void {
	let off = 0;
	try {
		while (off < data.length) {
			const n = writeSync(fd, data, off, data.length - off);
			if (n <= 0) throw Object.assign(new Error("the disk took no byte"), { code: "EIO" });
			off += n;
		}
	} catch (err) {
		throw Object.assign(err as object, { written: off });
	}
}

/** Syncs a directory so a rename in it survives a crash; a file system that cannot sync one is left as it is. */
function syncDir(dir: string): void {
	let fd: number;
	try {
		fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
	} catch {
		return;
	}
	try {
		fsyncSync(fd);
	} catch {
		// EINVAL on file systems without directory sync; the rename itself has happened either way.
	} finally {
		closeSync(fd);
	}
}

/** Targets of an unlocked read-modify-write (see `withLock`): the bytes the cycle began from. */
// Module scope is safe here: an entry lives only while one synchronous cycle runs (unlockedCycle), so no
// other server, request or timer can see it; threading it through every config writer would add nothing.
const unlocked = new Map<string, Buffer | null>();

const snapshot = (path: string): Buffer | null => {
	try {
		return readFileSync(path);
	} catch {
		return null;
	}
};

/** Thrown when an unlocked cycle's target changed under it: the cycle runs again from a fresh read. */
class ChangedMeanwhile extends Error {}

/**
 * Writes `data` to `path` at mode 0600, whole or not at all: a temp file in the same directory gets every
 * byte and an fsync, then replaces `path` by rename (the directory synced after). On any failure the temp
 * file is removed, `path` is byte-identical, and the error names the file, the reason and that it is unchanged.
 */
export function writeFileAtomic0600(path: string, data: string): void {
	const dir = dirname(path);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	let tmp = "";
	let fd = -1;
	// A random name nobody can plant ahead; one occupied anyway (EEXIST) is skipped, never written through.
	for (let tries = 0; fd < 0; tries++) {
		tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
		try {
			fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST" || tries >= 8) throw unchanged(path, err);
		}
	}
	try {
		try {
			writeAll(fd, Buffer.from(data));
			fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
		const before = unlocked.get(path);
		if (before !== undefined) {
			const now = snapshot(path);
			if (now === null ? before !== null : before === null || !now.equals(before)) throw new ChangedMeanwhile();
		}
		renameSync(tmp, path);
	} catch (err) {
		try {
			unlinkSync(tmp);
		} catch {}
		throw err instanceof ChangedMeanwhile ? err : unchanged(path, err);
	}
	syncDir(dir);
}

const unchanged = (path: string, err: unknown): Error =>
	new Error(`${path} not written (${reason(err)}); the file is unchanged`);

/** Unlocked cycles that found their target changed are run again this often before giving up. */
const UNLOCKED_TRIES = 5;

/**
 * `fn` as an optimistic cycle (a lock path held by something no bridge makes, lock.ts): its replace of
 * `target` is refused, and the cycle repeated, if another writer got there first.
 */
export function unlockedCycle<T>(target: string, fn: () => T): T {
	for (let tries = 1; ; tries++) {
		unlocked.set(target, snapshot(target));
		try {
			return fn();
		} catch (err) {
			if (!(err instanceof ChangedMeanwhile)) throw err;
			if (tries >= UNLOCKED_TRIES)
				throw new Error(`${target} kept changing while being written; not written, try again`);
		} finally {
			unlocked.delete(target);
		}
	}
}
