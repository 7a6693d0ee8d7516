/**
 * The lock a read-modify-write of the config or the runtime record holds between processes (two hosts,
 * `npm run token`): `<target>.lock`, holding the holder's pid. Invariants: a lock is never seen empty or in
 * part (its pid goes into a unique temp file that link() puts in place, failing when a lock is there); a lock
 * counts as left over only when its holder is gone (a dead pid, or one whose process started after the lock:
 * reused), never by age while the holder runs; one waiter at a time takes a left-over lock away
 * (`<lock>.takeover`), and what it removes is checked to be the very inode it judged. A lock path holding
 * something no bridge makes (a directory, a link, another user's file, text that is no pid) never blocks a
 * write: the cycle runs optimistically (disk.ts).
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	linkSync,
	lstatSync,
	mkdirSync,
	openSync,
	readSync,
	renameSync,
	type Stats,
	unlinkSync,
} from "node:fs";
import { dirname } from "node:path";
import { reason, unlockedCycle, writeAll } from "./disk.ts";
import { observePid } from "./pids.ts";

/** Holders keep the lock for a read and a rename (milliseconds); waiting longer means something is wrong. */
const LOCK_WAIT_MS = 5000;
/** Where a holder's start time is unknown (no /proc) or the lock is empty (an older version's), age decides. */
const LOCK_STALE_MS = 30_000;
/** /proc start times are whole seconds of boot time plus ticks: a reused pid started well after its lock. */
const START_SLACK_MS = 2000;
/** A lock holds a pid: a few digits. More than this is no lock of ours. */
const LOCK_MAX_BYTES = 32;
/** link() is not everywhere (some FUSE and FAT mounts): there the lock is created in place and written at once. */
const NO_LINKS = new Set(["EPERM", "ENOSYS", "EOPNOTSUPP", "EXDEV"]);

/** What sits at a lock path: a live holder's lock, one left over (`id`: its device and inode), or something else. */
type Occupant = { kind: "held" } | { kind: "stale"; id: string } | { kind: "foreign"; what: string };

const idOf = (st: Stats): string => `${st.dev}:${st.ino}`;

/** Whether the holder named by `text` in a lock last changed at `mtimeMs` is gone. */
function holderGone(text: string, mtimeMs: number): boolean {
	const age = Date.now() - mtimeMs;
	if (text === "") return age > LOCK_STALE_MS;
	const facts = observePid(Number(text));
	if (facts.kind === "gone") return true;
	if (facts.kind === "mine" && facts.start !== undefined) return facts.start > mtimeMs + START_SLACK_MS;
	return age > LOCK_STALE_MS;
}

/** Reads the lock without following a link or blocking on a FIFO, and says whose it can be. @internal */
export function occupant(lock: string): Occupant {
	let st: Stats;
	try {
		st = lstatSync(lock);
	} catch {
		return { kind: "stale", id: "" };
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
		return { kind: "stale", id: "" };
	}
	if (text !== "" && !/^[1-9][0-9]{0,15}$/.test(text)) return { kind: "foreign", what: "a file that holds no pid" };
	return holderGone(text, st.mtimeMs) ? { kind: "stale", id: idOf(st) } : { kind: "held" };
}

const unlinkQuietly = (path: string): void => {
	try {
		unlinkSync(path);
	} catch {}
};

/** Puts a file holding our pid at `path`, whole, unless something is there; whether it did. */
function placeLock(path: string): boolean {
	const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
	const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
	let fd: number;
	try {
		fd = openSync(tmp, flags, 0o600);
	} catch (err) {
		throw new Error(`${path} not created (${reason(err)}); nothing was written`);
	}
	try {
		// Never synced: a lock means something only while its holder runs, and a crash ends the holder.
		writeAll(fd, Buffer.from(String(process.pid)));
		closeSync(fd);
		fd = -1;
		linkSync(tmp, path);
		return true;
	} catch (err) {
		if (fd >= 0) closeSync(fd);
		const code = reason(err);
		if (code === "EEXIST") return false;
		if (!NO_LINKS.has(code)) throw new Error(`${path} not written (${code}); nothing was written`);
		return placeInPlace(path, flags);
	} finally {
		unlinkQuietly(tmp);
	}
}

/** Without link(): created exclusively and written at once (an empty lock counts as held for 30 s). */
function placeInPlace(path: string, flags: number): boolean {
	let fd: number;
	try {
		fd = openSync(path, flags, 0o600);
	} catch (err) {
		if (reason(err) === "EEXIST") return false;
		throw new Error(`${path} not created (${reason(err)}); nothing was written`);
	}
	try {
		writeAll(fd, Buffer.from(String(process.pid)));
	} catch (err) {
		unlinkQuietly(path);
		throw new Error(`${path} not written (${reason(err)}); nothing was written`);
	} finally {
		closeSync(fd);
	}
	return true;
}

/**
 * Removes the left-over lock judged as `id`, and nothing else: it is renamed aside under a name of ours and
 * checked to be that inode, still left over (no inode number reused by a live lock); anything else is put
 * back with link(), which never replaces. @internal
 */
export function removeLeftOver(path: string, id: string): void {
	const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.stale`;
	try {
		renameSync(path, aside);
	} catch {
		return;
	}
	const found = occupant(aside);
	if (found.kind !== "stale" || found.id !== id) {
		try {
			linkSync(aside, path);
		} catch {}
	}
	unlinkQuietly(aside);
}

/** Takes a left-over lock away as the only taker; false when another taker is at it (wait and look again). @internal */
export function takeOver(lock: string): boolean {
	const gate = `${lock}.takeover`;
	if (!placeLock(gate)) {
		// A taker that died inside its takeover leaves the gate: removed like any left-over lock.
		const taker = occupant(gate);
		if (taker.kind === "stale" && taker.id !== "") removeLeftOver(gate, taker.id);
		return false;
	}
	try {
		// Judged again behind the gate: no other taker can change the lock path now, and a live holder never does.
		const found = occupant(lock);
		if (found.kind === "stale" && found.id !== "") removeLeftOver(lock, found.id);
		return true;
	} finally {
		unlinkQuietly(gate);
	}
}

/**
 * Runs `fn` holding `<target>.lock`; waits up to 5 s for a live holder and takes over a lock whose holder is
 * gone. A lock path holding something no bridge makes is not waited on: `fn` runs as an optimistic cycle
 * (each replace of `target` checked against the bytes the cycle began from); `note` hears why. A live holder
 * past the wait throws a sentence naming the lock.
 */
export function withLock<T>(target: string, fn: () => T, note: (line: string) => void = () => {}): T {
	const lock = `${target}.lock`;
	mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
	const deadline = Date.now() + LOCK_WAIT_MS;
	while (!placeLock(lock)) {
		const found = occupant(lock);
		if (found.kind === "foreign") {
			note(`${lock} is ${found.what} the bridge did not make (remove it); ${target} was changed without the lock`);
			return unlockedCycle(target, fn);
		}
		if (found.kind === "stale" && (found.id === "" || takeOver(lock))) continue;
		if (Date.now() > deadline) {
			throw new Error(`${target}: another process holds ${lock} for more than ${LOCK_WAIT_MS / 1000} s; try again`);
		}
		Bun.sleepSync(5 + Math.floor(Math.random() * 10));
	}
	try {
		return fn();
	} finally {
		unlinkQuietly(lock);
	}
}
