/**
 * `PUT /blob`: atomic replace (contract §7). The body goes to a staging file beside the target
 * (blob/staging.ts); only a body that arrived whole, and matches any digest given, is fsynced, given the
 * old file's mode (and owner where the host can) and renamed over it. A cut leaves the staged bytes for
 * `offset=<staged size>`; a refused or failed one removes them. The target itself is never opened for write.
 */
import {
	closeSync,
	constants,
	fchmodSync,
	fchownSync,
	fstatSync,
	fsyncSync,
	lstatSync,
	mkdirSync,
	openSync,
	rmdirSync,
	type Stats,
} from "node:fs";
import { dirname } from "node:path";
import { errorText } from "../text/error-text.ts";
import { type Ctx, errno } from "./context.ts";
import { contentKey } from "./digest-cache.ts";
import { type CrossLocks, heldElsewhere, LOCK_WAIT_MS } from "./flock.ts";
import { type FileLocks, inodeKey } from "./locks.ts";
import { type BlobCode, blobError } from "./parse.ts";
import {
	cleanStaging,
	commit,
	commitNew,
	discard,
	openStaging,
	park,
	replaceTarget,
	type StagingFile,
} from "./staging.ts";
import { openTarget } from "./target.ts";
import { digestMismatch, digestsAfter, type Expected, mismatchReply, pipeBody, uploadReply } from "./upload.ts";

/** The file under the target's name, opened only to lock it: never a link, never waiting on a FIFO. */
const CURRENT = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The file being replaced, checked like any target (regular, not a pseudo-file); null when new. */
function existing(target: string, ctx: Ctx, path: string, offset: number | null): Stats | null | Response {
	const opened = openTarget(target, "read");
	if (!opened.ok) {
		if (opened.code === "not_found") return null;
		const code = opened.code === "read_failed" ? "write_failed" : opened.code;
		return ctx.refuse(path, offset, code, opened.message);
	}
	closeSync(opened.fd);
	if (opened.pseudo !== null) {
		const why = `${target} is not a regular file (a ${opened.pseudo} pseudo-file); /blob reads and writes regular files only`;
		return ctx.refuse(path, offset, "not_regular_file", why);
	}
	return opened.st;
}

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

function fsyncDir(dir: string): void {
	try {
		const fd = openSync(dir, "r");
		try {
			fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
	} catch {
		// The rename is done; a directory that cannot be synced only loses durability.
	}
}

/**
 * Whether an upload in another process holds the target: then the PUT is refused before its body. One
 * try, no waiting: the body must start to land before the handler first yields (blob/upload.ts).
 */
function lockedElsewhere(target: string, across: CrossLocks, log: (line: string) => void): boolean {
	let fd: number;
	try {
		fd = openSync(target, CURRENT);
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

type Placed = "done" | { code: BlobCode; why: string };
/** Times the file under the target's name is looked at again when it changed while this PUT waited. */
const INSTALL_TRIES = 3;

/**
 * Puts the staging file in the target's place under the lock of the file it replaces (blob/flock.ts), so
 * an append in another bridge never writes into a file this PUT unlinks, nor reports it as the target.
 * A missing target is created by a link that fails when one appeared meanwhile: that one is locked first.
 * `ready` gives the staging file its final metadata just before.
 */
async function install(
	file: StagingFile,
	target: string,
	ready: () => void,
	across: CrossLocks,
	log: (line: string) => void,
): Promise<Placed> {
	for (let tries = 0; tries < INSTALL_TRIES; tries++) {
		let fd: number;
		try {
			fd = openSync(target, CURRENT);
		} catch (err) {
			if (errno(err) !== "ENOENT") {
				// A link or something else unopenable under the name: no file's bytes are lost by replacing it.
				ready();
				commit(file, target);
				return "done";
			}
			ready();
			if (commitNew(file, target)) return "done";
			continue;
		}
		try {
			if (!fstatSync(fd).isFile()) {
				ready();
				commit(file, target);
				return "done";
			}
			const lock = await across.take(fd, log);
			if (lock.kind === "busy") {
				const why = `${heldElsewhere(target)} for ${LOCK_WAIT_MS / 1000} s`;
				return { code: "upload_in_progress", why };
			}
			if (lock.kind === "failed") return { code: "write_failed", why: `cannot lock ${target}: ${lock.why}` };
			try {
				const named = lstatSync(target);
				const own = fstatSync(fd);
				if (named.dev !== own.dev || named.ino !== own.ino) continue;
				ready();
				commit(file, target);
				return "done";
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

export async function put(
	req: Request,
	path: string,
	offset: number | null,
	expected: Expected,
	ctx: Ctx,
	locks: FileLocks,
): Promise<Response> {
	const { refuse } = ctx;
	const { target, linked } = replaceTarget(path);
	const old = existing(target, ctx, path, offset);
	if (old instanceof Response) return old;
	let madeDir: string | undefined;
	try {
		madeDir = mkdirSync(dirname(target), { recursive: true });
	} catch (err) {
		return refuse(path, offset, "write_failed", `cannot write ${path}: ${errorText(err)}; this upload changed nothing`);
	}
	// In this process one upload per target at a time; across processes each PUT has its own staging file.
	const keys = old === null ? [`target:${target}`] : [`target:${target}`, inodeKey(old)];
	const unlock = locks.takeAll(keys);
	if (unlock === null) return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
	let file: StagingFile | null = null;
	const drop = () => {
		if (file !== null) discard(file);
		try {
			if (madeDir && old === null)
				for (let d = dirname(target); d.length >= madeDir.length; d = dirname(d)) rmdirSync(d);
		} catch {
			// The directory holds other files now.
		}
	};
	try {
		if (old !== null && lockedElsewhere(target, locks.across, ctx.log)) {
			const why = heldElsewhere(path);
			return refuse(path, offset, "upload_in_progress", why);
		}
		cleanStaging(dirname(target));
		const opened = openStaging(target, offset);
		if (!opened.ok) {
			if (!("size" in opened)) return refuse(path, offset, opened.code, opened.message);
			const staged = { "upload-offset": String(opened.size) };
			return refuse(path, offset, opened.code, opened.message, staged, { staged: opened.size });
		}
		file = opened.value;
		const { fd } = file;
		const at = file.st.size;
		const w = await pipeBody(req, fd, at, ctx, true);
		const { stop, landed, wrote } = w;
		if (stop !== null) {
			const failed = stop.code === "write_failed";
			let kept = `${at + landed} bytes are staged and this upload did not change ${path}; continue with PUT …&offset=${at + landed}`;
			if (failed) {
				drop();
				kept = `nothing was kept and this upload did not change ${path}`;
			} else if (!park(file)) kept = `this upload did not change ${path}; its staged bytes could not be kept`;
			const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${kept}`;
			if (failed) ctx.log(`a2a-bridge: blob ${message}`);
			// The record counts the bytes kept: staged ones for a resume, none after a failed write.
			ctx.note(path, at, failed ? 0 : landed, failed ? message : stop.why);
			return blobError(stop.code, message);
		}
		if (wrote !== landed) {
			drop();
			const message = `the staging file for ${path} changed by ${landed - wrote} bytes more than this upload wrote: another writer touched it; nothing was kept and this upload did not change ${path}`;
			ctx.note(path, at, 0, message);
			return blobError("file_changed", message);
		}
		const got = await digestsAfter(fd, at, w);
		const wrong = digestMismatch(expected, got);
		if (wrong !== null) {
			drop();
			ctx.note(path, at, 0, `${wrong}; this upload did not change ${path}`);
			return mismatchReply(`${wrong}; nothing was kept: this upload did not change ${path}`, got);
		}
		let placed: Placed;
		try {
			fsyncSync(fd);
			placed = await install(file, target, () => keepMetadata(fd, old), locks.across, ctx.log);
		} catch (err) {
			drop();
			const message = `cannot replace ${target}: ${errorText(err)}; nothing was kept and this upload did not change ${path}`;
			ctx.log(`a2a-bridge: blob ${message}`);
			ctx.note(path, at, 0, message);
			return blobError("write_failed", message);
		}
		if (placed !== "done") {
			// The body is whole and checked: it stays staged, and an empty PUT with offset finishes it later.
			const size = at + landed;
			const parked = park(file);
			const kept = parked
				? `its ${size} bytes are staged: PUT …&offset=${size} with an empty body finishes it`
				: "its staged bytes could not be kept";
			const message = `${placed.why}; this upload did not change ${path}, ${kept}`;
			ctx.note(path, at, parked ? landed : 0, message);
			return blobError(placed.code, message);
		}
		fsyncDir(dirname(target));
		ctx.digests.remember(contentKey(fd), got.whole);
		ctx.note(path, at, landed);
		return uploadReply(path, at, landed, fstatSync(fd).size, got, linked ? { target } : {});
	} finally {
		if (file !== null) closeSync(file.fd);
		unlock();
	}
}
