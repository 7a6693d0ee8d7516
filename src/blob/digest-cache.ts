/**
 * Whole-file SHA-256s the bridge has computed (an upload's `sha256`, a download's `Repr-Digest`), so a
 * download asked for `Repr-Digest` right after an upload does not hash the file again. Keyed by device,
 * inode, size and the nanosecond mtime and ctime: any write, truncate, chmod or rename changes the ctime,
 * so a changed file misses. Bounded, least recently used first out. The same key makes downloads' `ETag`.
 */
import { createHash } from "node:crypto";
import { fstatSync } from "node:fs";

const MAX_ENTRIES = 256;

/** What identifies the file's current contents as far as the kernel tells. */
export function contentKey(fd: number): string {
	const st = fstatSync(fd, { bigint: true });
	return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * A strong `ETag` for the file's current contents (RFC 9110 §8.8.3): the content key hashed, so it changes
 * with any write, truncate, chmod or rename and tells nothing about the inode.
 */
export const entityTag = (key: string): string =>
	`"${createHash("sha256").update(key).digest("base64url").slice(0, 22)}"`;

export class DigestCache {
	readonly #known = new Map<string, string>();

	recall(key: string): string | undefined {
		const hex = this.#known.get(key);
		if (hex !== undefined) {
			this.#known.delete(key);
			this.#known.set(key, hex);
		}
		return hex;
	}

	remember(key: string, hex: string): void {
		this.#known.delete(key);
		this.#known.set(key, hex);
		if (this.#known.size > MAX_ENTRIES) this.#known.delete(this.#known.keys().next().value as string);
	}
}
