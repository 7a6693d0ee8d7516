/**
 * Disk primitives shared by the config file and the runtime record: a 0600 atomic write (temp file in the
 * same directory, then rename, so a reader sees the old file or the new one, never half of one) and a
 * short exclusive lock for read-modify-write cycles between processes (two hosts, `npm run token`).
 */
import { randomBytes } from "node:crypto";
import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Writes `data` to `path` at mode 0600 via a temp file and rename, so readers never see half a file. */
export function writeFileAtomic0600(path: string, data: string): void {
	mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
	const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
	const fd = openSync(tmp, "wx", 0o600);
	try {
		writeSync(fd, data);
	} finally {
		closeSync(fd);
	}
	try {
		renameSync(tmp, path);
	} catch (err) {
		unlinkSync(tmp);
		throw err;
	}
}

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

function staleLock(lock: string): boolean {
	try {
		const holder = Number.parseInt(readFileSync(lock, "utf8"), 10);
		const age = Date.now() - lstatSync(lock).mtimeMs;
		return age > LOCK_STALE_MS || (holder > 0 && !pidAlive(holder));
	} catch {
		return false;
	}
}

/**
 * Runs `fn` holding `<target>.lock` (created exclusively, holding our pid); waits up to 5 s for another
 * holder, takes over a lock whose holder is dead, and throws a sentence naming the lock otherwise.
 */
export function withLock<T>(target: string, fn: () => T): T {
	const lock = `${target}.lock`;
	mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		try {
			const fd = openSync(lock, "wx", 0o600);
			try {
				writeSync(fd, String(process.pid));
			} finally {
				closeSync(fd);
			}
			break;
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
			if (staleLock(lock)) {
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
	}
	try {
		return fn();
	} finally {
		try {
			unlinkSync(lock);
		} catch {}
	}
}
