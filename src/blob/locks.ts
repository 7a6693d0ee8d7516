/**
 * One upload per file, not per spelling (contract §15): the lock is the opened file's device and
 * inode, so a symlink, a hard link or `..` cannot start a second writer on the same bytes. A PUT also
 * holds its target's name (a new file has no inode yet). Per process: across processes, each PUT writes
 * its own staging file (blob/staging.ts) and POSTs detect another writer by the size.
 */
import type { Stats } from "node:fs";

export const inodeKey = (st: Stats): string => `${st.dev}:${st.ino}`;

export class FileLocks {
	readonly #held = new Set<string>();

	/** Takes the lock for the file `st` describes; false when an upload already holds it. */
	take(st: Stats): (() => void) | null {
		return this.takeAll([inodeKey(st)]);
	}

	/** Takes every key or none; null when one is held. */
	takeAll(keys: readonly string[]): (() => void) | null {
		if (keys.some(k => this.#held.has(k))) return null;
		for (const k of keys) this.#held.add(k);
		return () => {
			for (const k of keys) this.#held.delete(k);
		};
	}
}
