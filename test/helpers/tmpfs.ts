/**
 * A small tmpfs for full-disk tests (the suite runs as root, in CI too). A test that cannot mount one
 * fails with the reason: a full disk is the case under test, so it is never skipped quietly.
 */

import { closeSync, fstatSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";

const PAGE = 4096;

export interface SmallDisk {
	dir: string;
	/** Fills every free page with a filler file. */
	fill(): void;
	/** Frees `pages` pages of the filler (all of it when omitted). */
	free(pages?: number): void;
	unmount(): void;
}

export function mountTmpfs(sizeKiB = 64): SmallDisk {
	const dir = mkdtempSync(join(tmpdir(), "a2a-small-disk-"));
	const r = spawnSync(["mount", "-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0700`, "tmpfs", dir]);
	if (r.exitCode !== 0) {
		rmSync(dir, { recursive: true, force: true });
		throw new Error(`cannot mount a ${sizeKiB} KiB tmpfs at ${dir} (root is needed): ${r.stderr.toString().trim()}`);
	}
	const filler = join(dir, ".filler");
	return {
		dir,
		fill() {
			const fd = openSync(filler, "a");
			const page = Buffer.alloc(PAGE, 0x2e);
			try {
				for (;;) if (writeSync(fd, page) < PAGE) break;
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
			} finally {
				closeSync(fd);
			}
		},
		free(pages) {
			const fd = openSync(filler, "r+");
			try {
				const size = fstatSync(fd).size;
				ftruncateSync(fd, pages === undefined ? 0 : Math.max(0, size - pages * PAGE));
			} finally {
				closeSync(fd);
			}
		},
		unmount() {
			spawnSync(["umount", "-l", dir]);
			rmSync(dir, { recursive: true, force: true });
		},
	};
}
