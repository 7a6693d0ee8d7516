/**
 * The one way a test waits for something another process (or a timer) does: poll a real signal with
 * a bound, and on timeout fail naming what was awaited and what was last seen. Never a fixed sleep.
 */

export interface WaitOptions {
	/** Give up after this long (default 20 s). */
	timeoutMs?: number;
	/** Pause between probes (default 20 ms). */
	everyMs?: number;
	/** Appended to the timeout error: what the test saw last (stderr, frames, records). */
	seen?: () => unknown;
}

/**
 * Resolves with the first value `probe` returns other than undefined, null or false. A probe may be
 * async; one that throws ends the wait with its error (say why it can never come: a process exited).
 */
export async function waitFor<T>(
	what: string,
	probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
	opts: WaitOptions = {},
): Promise<T> {
	const timeoutMs = opts.timeoutMs ?? 20_000;
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const v = await probe();
		if (v !== undefined && v !== null && v !== false) return v;
		if (Date.now() > deadline) {
			const seen = opts.seen ? `; last seen: ${String(opts.seen()).slice(-2000)}` : "";
			throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}${seen}`);
		}
		await Bun.sleep(opts.everyMs ?? 20);
	}
}
