/**
 * One upload per file, not per spelling (contract §15): the lock is the opened file's device and
 * inode, so a symlink, a hard link or `..` cannot start a second writer on the same bytes.
 */
import type { Stats } from "node:fs";

export class FileLocks {
	readonly #held = new Set<string>();

	/** Takes the lock for the file `st` describes; false when an upload already holds it. */
	take(st: Stats): (() => void) | null {
		const key = `${st.dev}:${st.ino}`;
		if (this.#held.has(key)) return null;
		this.#held.add(key);
		return () => {
			this.#held.delete(key);
		};
	}
}
