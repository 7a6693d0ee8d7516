/**
 * One upload per file, not per spelling (contract §15, §19), on two levels. In this process: the opened
 * file's device and inode, so a symlink, a hard link or `..` cannot start a second writer on the same bytes
 * (a PUT and a POST also hold the target's name: a new file has no inode yet). Across processes: a flock on
 * the opened file (blob/flock.ts), taken after the first level, by POST for its whole write and by PUT for
 * its rename. Each PUT also writes its own staging file (blob/staging.ts).
 */
import type { Stats } from "node:fs";
import { CrossLocks } from "./flock.ts";

export const inodeKey = (st: Stats): string => `${st.dev}:${st.ino}`;

export class FileLocks {
	readonly #held = new Set<string>();

	/** The second level; a test gives one whose flock could not be loaded. */
	constructor(readonly across: CrossLocks = new CrossLocks()) {}

	/** Takes every key or none; null when one is held. */
	takeAll(keys: readonly string[]): (() => void) | null {
		if (keys.some(k => this.#held.has(k))) return null;
		for (const k of keys) this.#held.add(k);
		return () => {
			for (const k of keys) this.#held.delete(k);
		};
	}
}
