/**
 * An upload that receives no byte for BLOB_STALL_MS ends (contract §15). Bun pipes the body to the
 * file natively, so progress is read from the file's size; on a stall the connection is closed,
 * which ends the pipe the way a disconnect does.
 */
import { fstatSync } from "node:fs";

const BLOB_STALL_MS = 30_000;

/** Testing knob: A2A_BRIDGE_BLOB_STALL_MS shortens the bound so the end-to-end test runs fast. */
export function stallMs(env: Record<string, string | undefined> = process.env): number {
	const v = Number(env.A2A_BRIDGE_BLOB_STALL_MS);
	// It can shorten the contract's bound, never lift it.
	return Number.isFinite(v) && v > 0 ? Math.min(v, BLOB_STALL_MS) : BLOB_STALL_MS;
}

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
