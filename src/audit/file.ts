/**
 * The audit log's file: synchronous appends, so lines land in call order; a line is whole in the file or
 * absent (bytes of a failed write are cut back) and always starts on its own line; each write is synced right
 * behind it; a generation path held by something the bridge did not make stops rotation, never the records;
 * the file is 0600 from creation and never opened blocking. Several processes may share the path: each
 * write goes to the inode the path names now, and rotation runs under a lock beside the log, re-checked.
 */
import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync } from "node:fs";
import { writeAll } from "../config/disk.ts";
import { errorText } from "../text/error-text.ts";
import { budgetPath } from "./budget-file.ts";
import { auditGenerations, isLive, type RotationLock, rotateShared } from "./rotate.ts";

/** Every file of the log's own at `path` (the entry names them as own files): its generations and its budget file. */
export const auditOwnFiles = (path: string): string[] => [...auditGenerations(path), budgetPath(path)];

const FAILURE_LOG_EVERY = 100;
/** After another writer held the rotation lock through a whole wait, records go on unrotated this long. */
const ROTATE_RETRY_MS = 1000;

export class AuditFile {
	readonly path: string;
	readonly #maxBytes: number;
	readonly #log: (line: string) => void;
	readonly #lock: RotationLock | undefined;
	// The file stays open between records; it is reopened after rotation, after a failure, and when the path
	// no longer names it (removed, replaced, rotated by another process), so records never go to a lost inode.
	#fd: number | null = null;
	#rotateAfter = 0;
	/** The last byte is no line end (a cut record, another writer): the next line starts with one. */
	#newlineFirst = false;
	#failed = 0;
	/** Each reason rotation could not run is said once; records go on in the live file meanwhile. */
	readonly #toldRotation = new Set<string>();
	// Group commit on Bun's thread pool, behind the writes: records written while a sync runs share the next
	// one. A call does not wait for it (a sync costs about 1 ms on this kind of disk, the bridge's whole part of
	// a call 0.1 ms); the record is in the file, whole, before the call goes on either way.
	#dirty = false;
	#syncing: Promise<void> | null = null;
	#queued: Promise<void> | null = null;

	constructor(path: string, maxBytes: number, log: (line: string) => void, lock?: RotationLock) {
		this.path = path;
		this.#maxBytes = maxBytes;
		this.#log = log;
		this.#lock = lock;
	}

	/** Appends one line, rotating first when it would pass the limit; never throws (a failure is counted and said). */
	write(line: string): void {
		try {
			this.#append(line);
		} catch (err) {
			this.close();
			this.#fail(err);
			return;
		}
		void this.synced();
	}

	/** Resolves once every line written so far is synced (a failed sync is said like a failed write). */
	synced(): Promise<void> {
		if (this.#syncing === null) {
			if (!this.#dirty) return Promise.resolve();
			this.#syncing = this.#syncOnce().finally(() => {
				this.#syncing = null;
			});
			return this.#syncing;
		}
		this.#queued ??= this.#syncing.then(() => {
			this.#queued = null;
			return this.synced();
		});
		return this.#queued;
	}

	close(): void {
		if (this.#fd === null) return;
		try {
			// Records not yet synced by the group commit are synced here, before the descriptor goes.
			if (this.#dirty) fdatasyncSync(this.#fd);
		} catch {}
		try {
			closeSync(this.#fd);
		} catch {}
		this.#fd = null;
		this.#dirty = false;
	}

	/**
	 * One record in one write where possible, all of it or none: bytes a failed write left are cut back
	 * (when nobody appended since); what cannot be cut back is ended by a line break before the next record.
	 */
	#append(line: string): void {
		this.#fd = this.#current();
		const bytes = Buffer.byteLength(line);
		const size = fstatSync(this.#fd).size;
		if (size > 0 && size + bytes > this.#maxBytes && performance.now() >= this.#rotateAfter) {
			const blocked = (why: string) => this.#blocked(why);
			if (!rotateShared(this.path, this.#fd, bytes, this.#maxBytes, this.#lock, blocked)) {
				this.#rotateAfter = performance.now() + ROTATE_RETRY_MS;
			}
			this.#fd = this.#current();
		}
		const fd = this.#fd;
		const data = Buffer.from(this.#newlineFirst ? `\n${line}` : line);
		const at = fstatSync(fd).size;
		try {
			writeAll(fd, data);
		} catch (err) {
			const landed = (err as { written?: number }).written ?? 0;
			if (landed > 0) {
				try {
					if (fstatSync(fd).size !== at + landed) throw new Error("appended meanwhile");
					ftruncateSync(fd, at);
				} catch {
					this.#newlineFirst = true;
				}
			}
			throw err;
		}
		this.#newlineFirst = false;
		this.#dirty = true;
	}

	/** The open live file, reopened when the path no longer names the inode held (gone, replaced, rotated). */
	#current(): number {
		if (this.#fd !== null) {
			if (isLive(this.path, this.#fd) !== null) return this.#fd;
			this.close();
		}
		return this.#open();
	}

	/** Opens the live file; one whose last byte is no line end gets one before the next record. */
	#open(): number {
		// Read and append (the last byte tells whether the file ends on a line boundary); never blocking, so a
		// FIFO planted at the path fails a write (EAGAIN) instead of freezing the host.
		const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK;
		const opened = openSync(this.path, flags, 0o600);
		const st = fstatSync(opened);
		const last = Buffer.alloc(1);
		if (st.isFile() && st.size > 0 && readSync(opened, last, 0, 1, st.size - 1) === 1 && last[0] !== 0x0a) {
			this.#newlineFirst = true;
		}
		return opened;
	}

	#blocked(why: string): false {
		if (!this.#toldRotation.has(why)) {
			this.#toldRotation.add(why);
			this.#log(`a2a-bridge: audit log ${this.path} not rotated: ${why}; records go on in it past the limit`);
		}
		return false;
	}

	#syncOnce(): Promise<void> {
		return new Promise(resolve => {
			const target = this.#fd;
			this.#dirty = false;
			if (target === null) return resolve();
			fdatasync(target, err => {
				// EINVAL: a file that cannot be synced (/dev/full); EBADF: closed by a rotation, which synced it.
				const code = err?.code;
				if (err && code !== "EINVAL" && code !== "ENOTSUP" && !(code === "EBADF" && target !== this.#fd))
					this.#fail(err);
				resolve();
			});
		});
	}

	#fail(err: unknown): void {
		this.#failed++;
		if (this.#failed === 1 || this.#failed % FAILURE_LOG_EVERY === 0) {
			const cause = (err as NodeJS.ErrnoException).code ?? errorText(err);
			this.#log(`a2a-bridge: audit record not written to ${this.path} (${cause}); ${this.#failed} failed so far`);
		}
	}
}
