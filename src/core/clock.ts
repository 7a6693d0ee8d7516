/** The process's own time, the default wherever a part takes a `Clock` (tests hand in one they move by hand). */
import type { Clock } from "./types.ts";

/** `Date.now` and `setTimeout`. */
export const SYSTEM_CLOCK: Clock = {
	now: () => Date.now(),
	after: (ms, fn) => {
		const timer = setTimeout(fn, ms);
		return () => clearTimeout(timer);
	},
};
