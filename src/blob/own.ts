/**
 * The bridge's own files are not upload targets (contract §7): its config, every audit generation and
 * the runtime file. Compared by resolved path (symlinks and `..` followed) and by device + inode (a
 * second hard-linked name), so no spelling of them can be written through `/blob`.
 */
import { realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** The path with every existing link resolved; a missing last part keeps its name under the real parent. */
function realName(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		try {
			return join(realpathSync(dirname(path)), basename(path));
		} catch {
			return path;
		}
	}
}

const inode = (path: string): string | null => {
	try {
		const st = statSync(path);
		return `${st.dev}:${st.ino}`;
	} catch {
		return null;
	}
};

/** Which own file `path` names (a resolved path or the same inode), or null. */
export function ownFileOf(path: string, own: readonly string[]): string | null {
	if (own.length === 0) return null;
	const real = realName(path);
	const ino = inode(path);
	for (const file of own) {
		if (realName(file) === real) return file;
		if (ino !== null && inode(file) === ino) return file;
	}
	return null;
}
