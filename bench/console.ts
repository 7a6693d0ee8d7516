/**
 * A console round trip through the host's `hub` tool: send a line to a program on a pty, then read the
 * program's answer through `logs` (a long poll past the last cursor). One function for both sides of the
 * row: the load generator calls `hub` over HTTP through the bridge, bench/probe-ext.ts calls the same
 * tool in-process; `call` is the only difference.
 */

/** Answers every line it reads with `ans:<line>`; on a pty, the line's echo comes first. */
export const CONSOLE_PROGRAM = {
	application: "/bin/sh",
	args: ["-c", 'while IFS= read -r l; do echo "ans:$l"; done'],
	pty: true,
};

/** One `hub` call with these arguments, answered as the result's text. */
export type HubCall = (args: Record<string, unknown>) => Promise<string>;

const POLLS_PER_TRIP = 20;

const cursorOf = (text: string): number => Number(/cursor=(\d+)[;\]]/.exec(text)?.[1] ?? Number.NaN);

/** `n` round trips to the program `name`; resolves each one's milliseconds (send to answer seen). */
export async function consoleRoundTrips(call: HubCall, name: string, n: number, tag: string): Promise<number[]> {
	let cursor = cursorOf(await call({ op: "logs", name, lines: 1 }));
	const ms: number[] = [];
	for (let i = 0; i < n; i++) {
		const line = `${tag}-${i}z`;
		const t0 = performance.now();
		await call({ op: "send", name, text: line });
		for (let poll = 0; ; poll++) {
			const out = await call({ op: "logs", name, cursor, follow: true, timeout: 5, lines: 4 });
			cursor = cursorOf(out);
			if (out.includes(`ans:${line}`)) break;
			if (!Number.isFinite(cursor) || poll >= POLLS_PER_TRIP)
				throw new Error(`no answer to ${line}: ${out.slice(0, 300)}`);
		}
		ms.push(performance.now() - t0);
	}
	return ms;
}
