/**
 * Testing knobs (docs/testing.md, "Test-only environment variables"): variables that let the end-to-end
 * suite see a bound act without waiting for it. Invariant: a knob can shorten its bound, never lift it;
 * absent, blank, negative or not a finite number means the bound itself. The entry alone reads the
 * environment; each module gets its number handed in.
 */

/** The bounds the knobs may shorten, each from the module it limits (the entry fills them in). */
export interface Knobs {
	/** Session idle TTL (SESSION_TTL_MS). */
	sessionTtlMs: number;
	/** The connection idle bound in whole seconds (IDLE_TIMEOUT_S). */
	idleTimeoutS: number;
	/** The upload stall bound (BLOB_STALL_MS). */
	blobStallMs: number;
	/** The pacing of SSE progress (PROGRESS_MIN_INTERVAL_MS); 0 sends every update. */
	progressIntervalMs: number;
	/** The Tasks window (TASK_WINDOW_MS); 0 makes every declaring call a task. */
	taskWindowMs: number;
}

/** How a knob is read: whether 0 is a value (no pacing, no window) and whether it counts whole units. */
interface KnobRule {
	zero?: true;
	/** Whole units, at least 1 (Bun's idle timeout takes seconds, and 0 there means none at all). */
	whole?: true;
}

/** The one clamp: the asked value when it is a number the knob takes, at most `bound`; else `bound`. @internal */
export function knob(raw: string | undefined, bound: number, how: KnobRule = {}): number {
	const v = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
	if (!Number.isFinite(v) || v < 0 || (v === 0 && !how.zero)) return bound;
	return Math.min(bound, how.whole ? Math.max(1, Math.round(v)) : v);
}

/** Every knob from `env` (the entry hands in its environment), each clamped to its bound in `bounds`. */
export function readKnobs(env: Record<string, string | undefined>, bounds: Readonly<Knobs>): Knobs {
	return {
		sessionTtlMs: knob(env.A2A_BRIDGE_SESSION_TTL_MS, bounds.sessionTtlMs),
		idleTimeoutS: knob(env.A2A_BRIDGE_IDLE_TIMEOUT_S, bounds.idleTimeoutS, { whole: true }),
		blobStallMs: knob(env.A2A_BRIDGE_BLOB_STALL_MS, bounds.blobStallMs),
		progressIntervalMs: knob(env.A2A_BRIDGE_PROGRESS_INTERVAL_MS, bounds.progressIntervalMs, { zero: true }),
		taskWindowMs: knob(env.A2A_BRIDGE_TASK_WINDOW_MS, bounds.taskWindowMs, { zero: true }),
	};
}
