/**
 * The bridge's own paths are never upload targets (contract §19), in any spelling, as the target or as a
 * parent of it. Reserved: each own file (config, audit log, runtime file) with every name that extends it
 * by "." (its lock, temp files, audit generations, whatever name a later version picks), and every
 * staging-shaped name (`.a2a-staging-…`). The rule is asked about one name in one directory at a time, the
 * directory held open while a write walks to its target (blob/place.ts): by that directory's device and
 * inode, or by its reached path when it is not there yet. Names compare case-folded (a case-insensitive
 * disk names one file many ways). Own paths come absolute and canonical from the start (src/config/paths.ts).
 */
import { type Stats, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { reachedPath } from "../config/paths.ts";
import { STAGING_PREFIX } from "./staged.ts";

/**
 * At least as wide as any file system's case folding (Linux casefold is NFD plus full Unicode folding, so
 * `ſ` is `s`, `ß` is `ss`): compatibility forms decomposed, upper then lower case, ignorable points dropped.
 */
const fold = (s: string): string =>
	s
		.normalize("NFKD")
		.toUpperCase()
		.toLowerCase()
		.normalize("NFKD")
		.replace(/\p{Default_Ignorable_Code_Point}/gu, "");

const idOf = (st: Pick<Stats, "dev" | "ino">): string => `${st.dev}:${st.ino}`;

function statId(path: string): string | null {
	try {
		return idOf(statSync(path));
	} catch {
		return null;
	}
}

interface Reserved {
	file: string;
	dir: string;
	dirId: string | null;
	name: string;
	fileId: string | null;
}

/** The own files, as a write would reach them now; or why every write is refused (a relative own path). */
export type OwnFiles = { ok: true; files: readonly Reserved[] } | { ok: false; why: string };

export function ownFilesOf(own: readonly string[]): OwnFiles {
	// A relative own path has no place to compare with until someone says whose working directory it is.
	const loose = own.find(p => !isAbsolute(p));
	if (loose !== undefined) return { ok: false, why: `${loose} is not an absolute path` };
	const files = own.map(file => {
		const real = reachedPath(file);
		return {
			file,
			dir: fold(dirname(real)),
			dirId: statId(dirname(real)),
			name: fold(basename(real)),
			fileId: statId(real),
		};
	});
	return { ok: true, files };
}

/** A directory on the way to a target: its reached path, and its device and inode when it exists. */
export interface DirSeen {
	path: string;
	st: Pick<Stats, "dev" | "ino"> | null;
}

/**
 * Why writing `name` in `dir` (or below it, when `parentOf` names the target) would write a path of the
 * bridge's own, or null.
 */
export function ownName(files: readonly Reserved[], dir: DirSeen, name: string, parentOf?: string): string | null {
	const where = parentOf === undefined ? "" : ` (a parent of ${parentOf})`;
	const folded = fold(name);
	if (folded.startsWith(STAGING_PREFIX)) return `${join(dir.path, name)}${where} is an upload staging name`;
	const dirFolded = fold(dir.path);
	const dirId = dir.st === null ? null : idOf(dir.st);
	for (const r of files) {
		if (folded !== r.name && !folded.startsWith(`${r.name}.`)) continue;
		if (dirFolded !== r.dir && (dirId === null || dirId !== r.dirId)) continue;
		const what = folded === r.name ? r.file : `a name beside ${r.file}`;
		return `${join(dir.path, name)}${where} is the bridge's own file (${what})`;
	}
	return null;
}

/** Why the existing file `st` at `path` is an own file by another name (a hard link), or null. */
export function ownTwin(files: readonly Reserved[], path: string, st: Pick<Stats, "dev" | "ino">): string | null {
	const twin = files.find(r => r.fileId === idOf(st));
	return twin === undefined ? null : `${path} is the bridge's own file (${twin.file}, by another name)`;
}
