/**
 * The connection's idle timer (contract §15). Bun closes a connection after IDLE_TIMEOUT_S without a
 * finished request, before auth too; Bun's timer also runs while a request is pending and does not
 * restart on body bytes, so work that may take long (a tool call, a `/blob` transfer) holds it off
 * for its own duration and re-arms it when done. Routes reach the timer through the Request alone.
 */

/** At most 30 s (contract §15); also Bun's bound for half-sent headers is below it. */
export const IDLE_TIMEOUT_S = 30;

interface Timer {
	timeout(req: Request, seconds: number): void;
	/** Bun answers null once it is done with the request (response sent or connection gone). */
	requestIP(req: Request): unknown;
}

/** Whole seconds for Bun, 1 to IDLE_TIMEOUT_S: the testing knob can shorten the bound, never lift it. */
export function idleSeconds(asked: number): number {
	return Number.isFinite(asked) ? Math.min(IDLE_TIMEOUT_S, Math.max(1, Math.round(asked))) : IDLE_TIMEOUT_S;
}

const timers = new WeakMap<Request, { server: Timer; idleS: number }>();
const noop = (): void => {};

/** Called by the listener for every request it hands to the pipeline. */
export function trackRequest(req: Request, server: Timer, idleS = IDLE_TIMEOUT_S): void {
	timers.set(req, { server, idleS });
}

/**
 * Switches the idle timer off for this request's connection; the returned function switches it
 * back on (idempotent). A request the listener did not see (unit tests) gets no-ops.
 */
export function holdOpen(req: Request): () => void {
	const timer = timers.get(req);
	if (timer === undefined) return noop;
	timer.server.timeout(req, 0);
	let held = true;
	return () => {
		if (!held) return;
		held = false;
		try {
			timer.server.timeout(req, timer.idleS);
		} catch {
			// The connection is already gone.
		}
	};
}

/** Makes the connection close within a few seconds unless it finishes first (a stalled upload). */
export function closeSoon(req: Request): void {
	try {
		timers.get(req)?.server.timeout(req, 1);
	} catch {
		// Already closed.
	}
}

/** Whether Bun is done with this request (its response sent, or the client gone); null when not tracked. */
export function requestDone(req: Request): boolean | null {
	const timer = timers.get(req);
	if (timer === undefined) return null;
	try {
		return timer.server.requestIP(req) === null;
	} catch {
		return true;
	}
}
