/**
 * How a `/blob` path is opened (contract §15); where it leads is blob/place.ts's walk for a write and
 * config/paths.ts's `reachedPath` for a staged size. Regular files only, both ways, decided on the opened
 * descriptor so no later step can block. The open itself never waits (O_NONBLOCK: a FIFO with no
 * peer, a tty); FIFOs, sockets, devices, `/dev/stdin` and the like are refused after `fstat`.
 * Kernel pseudo-files (procfs, sysfs, …) are regular by `fstat` but their size is made up.
 */
import { closeSync, constants, fstatSync, openSync, type Stats, statfsSync } from "node:fs";
import type { Refused } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { errno } from "./context.ts";
import type { BlobCode } from "./parse.ts";

/** `statfs` magic numbers of file systems whose files have no true size (linux/magic.h). */
const PSEUDO_FS = new Map<number, string>([
	[0x9fa0, "procfs"],
	[0x62656572, "sysfs"],
	[0x64626720, "debugfs"],
	[0x74726163, "tracefs"],
	[0x73636673, "securityfs"],
	[0x27e0eb, "cgroupfs"],
	[0x63677270, "cgroup2fs"],
	[0x62656570, "configfs"],
	[0xde5e81e4, "efivarfs"],
	[0xcafe4a11, "bpffs"],
	[0x6165676c, "pstorefs"],
]);

const READ = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const APPEND = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK | constants.O_NOCTTY;
/** A write opens the name its walk checked (blob/place.ts), never a link put there since. */
const FLAGS = {
	read: READ,
	replace: READ | constants.O_NOFOLLOW,
	append: APPEND | constants.O_NOFOLLOW,
} as const;

export type OpenedTarget = { ok: true; fd: number; st: Stats; pseudo: string | null } | Refused<BlobCode>;

/**
 * Opens `path` for reading, for a look at the file a PUT replaces, or for appending (created when missing),
 * and checks what it is. Messages name it `shown` (a held directory's name for it is no name to show).
 */
export function openTarget(at: string, mode: keyof typeof FLAGS, path = at): OpenedTarget {
	let fd: number;
	try {
		fd = openSync(at, FLAGS[mode], 0o666);
	} catch (err) {
		if (mode !== "read" && errno(err) === "ELOOP") {
			return { ok: false, code: "file_changed", why: `${path} became a link while this upload opened it` };
		}
		if (mode !== "append" && (errno(err) === "ENOENT" || errno(err) === "ENOTDIR")) {
			return { ok: false, code: "not_found", why: `${path} does not exist` };
		}
		if (errno(err) === "EISDIR") return { ok: false, code: "is_directory", why: `${path} is a directory` };
		if (errno(err) === "ENXIO") return refusal(path, "a FIFO or socket with no peer");
		const verb = mode === "append" ? "write" : "read";
		const why = errorText(err).replaceAll(at, path);
		return { ok: false, code: `${verb}_failed`, why: `cannot ${verb} ${path}: ${why}` };
	}
	try {
		const st = fstatSync(fd);
		if (st.isDirectory()) return close(fd, { ok: false, code: "is_directory", why: `${path} is a directory` });
		if (!st.isFile()) return close(fd, refusal(path, kindOf(st)));
		const pseudo = pseudoFs(fd, at);
		if (pseudo !== null && mode === "append") return close(fd, refusal(path, `a ${pseudo} pseudo-file`));
		return { ok: true, fd, st, pseudo };
	} catch (err) {
		const verb = mode === "append" ? "write" : "read";
		return close(fd, { ok: false, code: `${verb}_failed`, why: `cannot ${verb} ${path}: ${errorText(err)}` });
	}
}

const refusalText = (path: string, what: string): string =>
	`${path} is not a regular file (${what}); /blob reads and writes regular files only`;
const refusal = (path: string, what: string): OpenedTarget => ({
	ok: false,
	code: "not_regular_file",
	why: refusalText(path, what),
});

function close(fd: number, r: OpenedTarget): OpenedTarget {
	closeSync(fd);
	return r;
}

/** Why a write to `path`, which reaches `st` (no regular file, no directory), is refused. */
export const notRegular = (path: string, st: Stats): string => refusalText(path, kindOf(st));

function kindOf(st: Stats): string {
	if (st.isFIFO()) return "a FIFO";
	if (st.isSocket()) return "a socket";
	if (st.isCharacterDevice()) return "a character device";
	if (st.isBlockDevice()) return "a block device";
	return "not a plain file";
}

/** The pseudo file system holding the open file, or null. `/proc/self/fd/N` names the file itself. */
function pseudoFs(fd: number, path: string): string | null {
	let type: number;
	try {
		type = statfsSync(`/proc/self/fd/${fd}`).type;
	} catch {
		try {
			type = statfsSync(path).type;
		} catch {
			return null;
		}
	}
	return PSEUDO_FS.get(type) ?? null;
}
