/**
 * Where a `PUT` collects its body before the rename (contract §7): one staging file per target, beside
 * it (same directory, so the rename is atomic), 0600, named `.a2a-staging-<hash of the target path>`,
 * a name no target can have. A cut PUT leaves it for `offset=` to continue; old ones are cleaned.
 */
import { createHash } from "node:crypto";
import {
	closeSync,
	constants,
	fchmodSync,
	fstatSync,
	lstatSync,
	openSync,
	readdirSync,
	readlinkSync,
	realpathSync,
	type Stats,
	unlinkSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { errorText } from "../text/error-text.ts";
import { errno } from "./context.ts";
import type { BlobParsed } from "./parse.ts";

const PREFIX = ".a2a-staging-";
const NAME = /^\.a2a-staging-[0-9a-f]{32}$/;
/** Staging files older than this are removed by the next PUT into their directory. */
const STAGING_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** At most this many staging files stay in one directory (the oldest go first). @internal */
export const STAGING_MAX_PER_DIR = 8;
const MAX_LINK_HOPS = 40;

const STAGE = constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The file a write to `path` reaches: symlinks are followed (even dangling), so a PUT replaces the file
 * a link points to and the link stays. `linked` says a link was followed.
 */
export function replaceTarget(path: string): { target: string; linked: boolean } {
	let at = path;
	let hop = 0;
	for (; hop < MAX_LINK_HOPS; hop++) {
		let st: Stats;
		try {
			st = lstatSync(at);
		} catch {
			break;
		}
		if (!st.isSymbolicLink()) break;
		at = resolve(dirname(at), readlinkSync(at));
	}
	// The directory may itself be reached through links: name the staging file by the real one.
	try {
		return { target: join(realpathSync(dirname(at)), basename(at)), linked: hop > 0 };
	} catch {
		return { target: at, linked: hop > 0 };
	}
}

export const stagingPath = (target: string): string =>
	join(dirname(target), `${PREFIX}${createHash("sha256").update(target).digest("hex").slice(0, 32)}`);

/** Only a file this bridge could have made: regular, one name, this user's. */
const isOurs = (st: Stats): boolean => st.isFile() && st.nlink === 1 && st.uid === process.getuid?.();

/** The staged size for `target`, or null when nothing is staged. */
export function stagedSize(target: string): number | null {
	try {
		const st = lstatSync(stagingPath(target));
		return isOurs(st) ? st.size : null;
	} catch {
		return null;
	}
}

/**
 * Opens the staging file: `offset` null starts afresh (whatever was there is removed first, so a planted
 * link or file is never written through); a number continues it and must equal its size.
 */
export function openStaging(
	path: string,
	offset: number | null,
): BlobParsed<{ fd: number; st: Stats }> | { ok: false; code: "offset_mismatch"; message: string; size: number } {
	const fresh = offset === null || offset === 0;
	try {
		if (fresh) {
			try {
				unlinkSync(path);
			} catch (err) {
				if (errno(err) !== "ENOENT") throw err;
			}
		}
		const fd = openSync(path, STAGE | (fresh ? constants.O_CREAT | constants.O_EXCL : 0), 0o600);
		const st = fstatSync(fd);
		if (!isOurs(st) || st.size !== (offset ?? 0)) {
			closeSync(fd);
			const size = isOurs(st) ? st.size : 0;
			return {
				ok: false,
				code: "offset_mismatch",
				size,
				message: `offset ${offset} does not match the ${size} bytes staged for this file`,
			};
		}
		fchmodSync(fd, 0o600);
		return { ok: true, value: { fd, st } };
	} catch (err) {
		if (!fresh && (errno(err) === "ENOENT" || errno(err) === "ELOOP")) {
			const message = `offset ${offset} does not match the 0 bytes staged for this file (nothing is staged)`;
			return { ok: false, code: "offset_mismatch", size: 0, message };
		}
		return {
			ok: false,
			code: "write_failed",
			message: `cannot stage the upload in ${dirname(path)}: ${errorText(err)}`,
		};
	}
}

/**
 * Removes staging files in `dir` older than STAGING_MAX_AGE_MS, then the oldest beyond
 * STAGING_MAX_PER_DIR; `keep` (the one in use, and any an upload holds) is never touched.
 */
export function cleanStaging(dir: string, keep: (path: string) => boolean): void {
	let names: string[];
	try {
		names = readdirSync(dir).filter(n => NAME.test(n));
	} catch {
		return;
	}
	const now = Date.now();
	const left: Array<{ path: string; mtime: number }> = [];
	for (const name of names) {
		const path = join(dir, name);
		if (keep(path)) continue;
		try {
			const st = lstatSync(path);
			if (!isOurs(st)) continue;
			if (now - st.mtimeMs > STAGING_MAX_AGE_MS) unlinkSync(path);
			else left.push({ path, mtime: st.mtimeMs });
		} catch {
			// Gone meanwhile, or not ours to remove.
		}
	}
	left.sort((a, b) => a.mtime - b.mtime);
	for (const { path } of left.slice(0, Math.max(0, left.length - (STAGING_MAX_PER_DIR - 1)))) {
		try {
			unlinkSync(path);
		} catch {
			// Best effort, as above.
		}
	}
}
