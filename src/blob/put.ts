/**
 * `PUT /blob`: atomic replace (contract §7). The body goes to a staging file beside the target
 * (blob/staging.ts); only a body that arrived whole, and matches any digest given, is fsynced, given the
 * old file's mode (and owner where the host can) and renamed over it. A cut leaves the staged bytes for
 * `offset=<staged size>`; a refused or failed one removes them. The target itself is never opened for write.
 */
import {
	closeSync,
	fchmodSync,
	fchownSync,
	fstatSync,
	fsyncSync,
	mkdirSync,
	openSync,
	renameSync,
	rmdirSync,
	type Stats,
	unlinkSync,
} from "node:fs";
import { dirname } from "node:path";
import { errorText } from "../text/error-text.ts";
import type { Ctx } from "./context.ts";
import { contentKey } from "./digest-cache.ts";
import { type FileLocks, inodeKey } from "./locks.ts";
import { blobError } from "./parse.ts";
import { cleanStaging, openStaging, replaceTarget, stagingPath } from "./staging.ts";
import { openTarget } from "./target.ts";
import { digestMismatch, digestsAfter, type Expected, mismatchReply, pipeBody, uploadReply } from "./upload.ts";

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
	const staging = stagingPath(target);
	let madeDir: string | undefined;
	try {
		madeDir = mkdirSync(dirname(target), { recursive: true });
	} catch (err) {
		return refuse(path, offset, "write_failed", `cannot write ${path}: ${errorText(err)}; nothing changed`);
	}
	const nameKey = `staging:${staging}`;
	const unlockName = locks.takeAll(old === null ? [nameKey] : [nameKey, inodeKey(old)]);
	if (unlockName === null) return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
	let fd: number | null = null;
	let unlockStaged: (() => void) | null = null;
	const drop = () => {
		try {
			unlinkSync(staging);
			if (madeDir && old === null)
				for (let d = dirname(target); d.length >= madeDir.length; d = dirname(d)) rmdirSync(d);
		} catch {
			// Gone already, or the directory holds other files now.
		}
	};
	try {
		cleanStaging(dirname(target), p => p === staging || locks.holds(`staging:${p}`));
		const opened = openStaging(staging, offset);
		if (!opened.ok) {
			if (!("size" in opened)) return refuse(path, offset, opened.code, opened.message);
			const staged = { "upload-offset": String(opened.size) };
			return refuse(path, offset, opened.code, opened.message, staged, { staged: opened.size });
		}
		fd = opened.value.fd;
		unlockStaged = locks.take(opened.value.st);
		if (unlockStaged === null) return refuse(path, offset, "upload_in_progress", `an upload to ${path} is in progress`);
		const at = opened.value.st.size;
		const w = await pipeBody(req, fd, at, ctx.conn, ctx.ended, true);
		const { stop, landed, wrote } = w;
		if (stop !== null) {
			const failed = stop.code === "write_failed";
			if (failed) drop();
			const kept = failed
				? "nothing was kept and the file is unchanged"
				: `${at + landed} bytes are staged and the file is unchanged; continue with PUT …&offset=${at + landed}`;
			const message = `${failed ? "writing" : "upload to"} ${path} stopped: ${stop.why}; ${kept}`;
			if (failed) ctx.log(`a2a-bridge: blob ${message}`);
			ctx.note(path, at, landed, failed ? message : stop.why);
			return blobError(stop.code, message);
		}
		if (wrote !== landed) {
			drop();
			const message = `the staging file for ${path} changed by ${landed - wrote} bytes more than this upload wrote: another writer touched it; nothing was kept`;
			ctx.note(path, at, landed, message);
			return blobError("file_changed", message);
		}
		const got = await digestsAfter(fd, at, w);
		const wrong = digestMismatch(expected, got);
		if (wrong !== null) {
			drop();
			ctx.note(path, at, 0, `${wrong}; the file is unchanged`);
			return mismatchReply(`${wrong}; nothing was kept: ${path} is unchanged`, got);
		}
		try {
			fsyncSync(fd);
			keepMetadata(fd, old);
			renameSync(staging, target);
		} catch (err) {
			drop();
			const message = `cannot replace ${target}: ${errorText(err)}; nothing was kept and the file is unchanged`;
			ctx.log(`a2a-bridge: blob ${message}`);
			ctx.note(path, at, landed, message);
			return blobError("write_failed", message);
		}
		fsyncDir(dirname(target));
		ctx.digests.remember(contentKey(fd), got.whole);
		ctx.note(path, at, landed);
		return uploadReply(path, at, landed, fstatSync(fd).size, got, linked ? { target } : {});
	} finally {
		if (fd !== null) closeSync(fd);
		unlockStaged?.();
		unlockName();
	}
}
