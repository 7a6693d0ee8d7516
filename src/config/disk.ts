/**
 * Disk primitives shared by the config file, the runtime record and the audit log. Invariants: a write
 * counts only when every byte landed and was synced, else it throws with the old file untouched (contract
 * §19); a replace goes through a temp file in the same directory and a rename, so a reader sees the old file
 * or the new one whole; read-modify-write cycles between processes (two hosts, `npm run token`) hold a
 * short exclusive lock, and a lock path occupied by something no bridge makes never blocks a write.
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fsyncSync,
	lstatSync,
	mkdirSync,
	openSync,
	readFileSync,
	readSync,
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

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
function pidAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return (err as NodeJS.ErrnoException).code === "EPERM";
	}
}

/** Holders keep the lock for a read and a rename (milliseconds); waiting longer means something is wrong. */
const LOCK_WAIT_MS = 5000;
/** A lock this old is left over (its holder was killed between create and remove), whatever its pid says. */
const LOCK_STALE_MS = 30_000;
/** A holder writes its pid right after creating the lock: an empty lock older than this was left by a crash. */
const EMPTY_LOCK_STALE_MS = 1000;
/** A lock holds a pid: a few digits. More than this is no lock of ours. */
const LOCK_MAX_BYTES = 32;
/** Unlocked cycles that found their target changed are run again this often before giving up. */
const UNLOCKED_TRIES = 5;

/** What sits at a lock path: a holder's lock (live or left over), or something no bridge makes. */
type Occupant = { kind: "held" } | { kind: "stale" } | { kind: "foreign"; what: string };

/** Reads the lock without following a link or blocking on a FIFO, and says whose it can be. */
function occupant(lock: string): Occupant {
	let st: ReturnType<typeof lstatSync>;
	try {
		st = lstatSync(lock);
	} catch {
		return { kind: "stale" };
	}
	const type = st.isDirectory() ? "a directory" : st.isSymbolicLink() ? "a symlink" : "not a regular file";
	if (!st.isFile()) return { kind: "foreign", what: type };
	if (typeof process.getuid === "function" && st.uid !== process.getuid())
		return { kind: "foreign", what: "another user's file" };
	let text: string;
	try {
		const fd = openSync(lock, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		try {
			const buf = Buffer.alloc(LOCK_MAX_BYTES + 1);
			text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("latin1");
		} finally {
			closeSync(fd);
		}
	} catch {
		return { kind: "stale" };
	}
	const age = Date.now() - st.mtimeMs;
	if (text === "") return age > EMPTY_LOCK_STALE_MS ? { kind: "stale" } : { kind: "held" };
	if (!/^[1-9][0-9]{0,15}$/.test(text)) return { kind: "foreign", what: "a file that holds no pid" };
	return age > LOCK_STALE_MS || !pidAlive(Number(text)) ? { kind: "stale" } : { kind: "held" };
}

/** Creates the lock holding our pid, whole; a lock that could not be written is removed again. */
function createLock(lock: string): boolean {
	let fd: number;
	try {
		fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
		throw new Error(`${lock} not created (${reason(err)}); nothing was written`);
	}
	try {
		// Never synced: a lock means something only while its holder runs, and a crash ends the holder.
		writeAll(fd, Buffer.from(String(process.pid)));
	} catch (err) {
		closeSync(fd);
		try {
			unlinkSync(lock);
		} catch {}
		throw new Error(`${lock} not written (${reason(err)}); nothing was written`);
	}
	closeSync(fd);
	return true;
}

/**
 * Runs `fn` holding `<target>.lock` (created exclusively, holding our pid); waits up to 5 s for another
 * holder and takes over a lock whose holder is dead. A lock path holding something no bridge makes (a
 * directory, a link, another user's file, text that is no pid) is not waited on: `fn` runs without the lock,
 * each replace of `target` checked against the bytes the cycle began from and the cycle run again when they
 * changed; `note` hears why. A live holder past the wait throws a sentence naming the lock.
 */
export function withLock<T>(target: string, fn: () => T, note: (line: string) => void = () => {}): T {
	const lock = `${target}.lock`;
	mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		if (createLock(lock)) break;
		const found = occupant(lock);
		if (found.kind === "foreign") {
			note(`${lock} is ${found.what} the bridge did not make (remove it); ${target} was changed without the lock`);
			return unlockedCycle(target, fn);
		}
		if (found.kind === "stale") {
			try {
				unlinkSync(lock);
			} catch {}
			continue;
		}
		if (Date.now() > deadline) {
			throw new Error(`${target}: another process holds ${lock} for more than ${LOCK_WAIT_MS / 1000} s; try again`);
		}
		Bun.sleepSync(5 + Math.floor(Math.random() * 10));
	}
	try {
		return fn();
	} finally {
		try {
			unlinkSync(lock);
		} catch {}
	}
}

/** `fn` as an optimistic cycle: its replace of `target` is refused (and the cycle repeated) if another writer got there first. */
function unlockedCycle<T>(target: string, fn: () => T): T {
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
