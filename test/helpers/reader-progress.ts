/**
 * What a raw-socket reader script (test/fixtures/slow_reader.py and friends) reports on stdout, one JSON line
 * per step: bytes received so far, its receive buffer, and how it ended, kept up to date as lines arrive.
 */
export interface ReaderState {
	rcvbuf: number;
	got: number;
	end: string | undefined;
	/** `performance.now()` when the end was reported (0 until then). */
	endedAt: number;
}

/** Follows `stdout` in the background; the returned state changes as the reader reports. */
export function followReader(stdout: ReadableStream<Uint8Array>): ReaderState {
	const state: ReaderState = { rcvbuf: 0, got: 0, end: undefined, endedAt: 0 };
	void (async () => {
		let rest = "";
		for await (const chunk of stdout) {
			rest += Buffer.from(chunk).toString();
			const lines = rest.split("\n");
			rest = lines.pop() ?? "";
			for (const line of lines) {
				const m = JSON.parse(line) as { rcvbuf?: number; got?: number; end?: string };
				if (m.rcvbuf !== undefined) state.rcvbuf = m.rcvbuf;
				if (m.got !== undefined) state.got = m.got;
				if (m.end !== undefined) {
					state.end = m.end;
					state.endedAt = performance.now();
				}
			}
		}
	})();
	return state;
}
