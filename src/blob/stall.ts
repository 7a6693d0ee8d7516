/**
 * An upload that receives no byte for BLOB_STALL_MS ends (contract §15). Bun pipes the body to the
 * file natively, so progress is read from the file's size; on a stall the connection is closed,
 * which ends the pipe the way a disconnect does.
 */
import { fstatSync } from "node:fs";

/** The contract's bound; a testing knob may shorten it (src/config/knobs.ts), handed in as `BlobDeps.stallMs`. */
export const BLOB_STALL_MS = 30_000;

export interface StallWatch {
	/** True once the watch fired. */
	readonly stalled: boolean;
	stop(): void;
}

/** Calls `onStall` once when `fd` has not grown for `ms`; checks a few times per bound. */
export function watchStall(fd: number, ms: number, onStall: () => void): StallWatch {
	let last = -1;
	let lastAt = Date.now();
	let stalled = false;
	const timer = setInterval(
		() => {
			let size: number;
			try {
				size = fstatSync(fd).size;
			} catch {
				return;
			}
			const now = Date.now();
			if (size !== last) {
				last = size;
				lastAt = now;
			} else if (now - lastAt >= ms && !stalled) {
				stalled = true;
				clearInterval(timer);
				onStall();
			}
		},
		Math.max(10, Math.min(1000, Math.floor(ms / 4))),
	);
	timer.unref?.();
	return {
		get stalled() {
			return stalled;
		},
		stop: () => clearInterval(timer),
	};
}
