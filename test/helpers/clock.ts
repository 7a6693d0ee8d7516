/** A clock the test moves by hand: `advance` runs every timer that falls due, in time order. */
import type { Clock } from "../../src/core/types.ts";

export interface ManualClock extends Clock {
	advance(ms: number): void;
	/** Timers set and not yet run or cancelled. */
	pending(): number;
}

export function manualClock(start = 1_000_000): ManualClock {
	let t = start;
	let seq = 0;
	const timers = new Map<number, { at: number; fn: () => void }>();
	return {
		now: () => t,
		after(ms, fn) {
			const id = seq++;
			timers.set(id, { at: t + Math.max(0, ms), fn });
			return () => timers.delete(id);
		},
		advance(ms) {
			const end = t + ms;
			for (;;) {
				const due = [...timers].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
				if (due === undefined) break;
				timers.delete(due[0]);
				t = due[1].at;
				due[1].fn();
			}
			t = end;
		},
		pending: () => timers.size,
	};
}
