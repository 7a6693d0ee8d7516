/**
 * One upload per file, not per spelling (contract §15): the lock is the opened file's device and
 * inode, so a symlink, a hard link or `..` cannot start a second writer on the same bytes. A PUT also
 * holds its staging file's name, so two replacements of one target cannot share it.
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

	holds(key: string): boolean {
		return this.#held.has(key);
	}
}
