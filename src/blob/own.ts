/**
 * The bridge's own paths are never upload targets (contract §19), in any spelling, as the target or as a
 * parent of it. Reserved: each own file (config, audit log, runtime file) with every name that extends it
 * by "." (its lock, temp files, audit generations, whatever name a later version picks), and every
 * staging-shaped name (`.a2a-staging-…`). Both sides are resolved as the kernel would reach them when
 * writing: every link followed (dangling ones too), missing parts taken as written. Names compare
 * case-folded (a case-insensitive disk names one file many ways); directories also by device and inode.
 * Own paths come absolute and canonical from the start (src/config/paths.ts); a relative one refuses every write.
 */
import { statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, sep } from "node:path";
import { reachedPath } from "../config/paths.ts";
import { STAGING_PREFIX } from "./staged.ts";

const fold = (s: string): string => s.normalize("NFC").toLowerCase();

const idOf = (path: string): string | null => {
	try {
		const st = statSync(path);
		return `${st.dev}:${st.ino}`;
	} catch {
		return null;
	}
};

interface Reserved {
	file: string;
	dir: string;
	dirId: string | null;
	name: string;
	fileId: string | null;
}

function reserved(file: string): Reserved {
	const real = reachedPath(file);
	return {
		file,
		dir: fold(dirname(real)),
		dirId: idOf(dirname(real)),
		name: fold(basename(real)),
		fileId: idOf(real),
	};
}

/** Whether `name` in directory `dir` (reached, folded; `id` its device and inode) is `r` or one of its family. */
function inFamily(r: Reserved, dir: string, id: string | null, name: string): boolean {
	if (name !== r.name && !name.startsWith(`${r.name}.`)) return false;
	return dir === r.dir || (id !== null && id === r.dirId);
}

/**
 * Why an upload to `path` (absolute, lexically resolved) would write a path of the bridge's own, or null.
 * `own` lists the own files; the answer names the one hit.
 */
export function ownPathOf(path: string, own: readonly string[]): string | null {
	// A relative own path has no place to compare with until someone says whose working directory it is.
	const loose = own.find(p => !isAbsolute(p));
	if (loose !== undefined) return `${path} may be the bridge's own file (${loose} is not an absolute path)`;
	const real = reachedPath(path);
	const files = own.map(reserved);
	const parts = real.split(sep).filter(p => p !== "");
	let dir: string = sep;
	for (const [i, part] of parts.entries()) {
		const name = fold(part);
		const last = i === parts.length - 1;
		const where = last ? "" : ` (a parent of ${real})`;
		if (name.startsWith(STAGING_PREFIX)) return `${join(dir, part)}${where} is an upload staging name`;
		const dirFolded = fold(dir);
		const dirId = idOf(dir);
		for (const r of files) {
			if (inFamily(r, dirFolded, dirId, name)) {
				const what = name === r.name ? r.file : `a name beside ${r.file}`;
				return `${join(dir, part)}${where} is the bridge's own file (${what})`;
			}
		}
		dir = join(dir, part);
	}
	// A second name of an own file (a hard link) anywhere.
	const id = idOf(real);
	const twin = id === null ? undefined : files.find(r => r.fileId === id);
	return twin === undefined ? null : `${real} is the bridge's own file (${twin.file}, by another name)`;
}
