/**
 * The one place `/blob` uses its request's connection handle (core/idle.ts): the idle timer held off
 * while work that may take long runs, closed soon on a stalled sender, and whether Bun has finished
 * sending a response.
 */
import type { Connection } from "../core/types.ts";

/** Runs `work` with the connection's idle timer off (a long transfer or hash), on again after. */
export async function holding<T>(conn: Connection, work: () => Promise<T>): Promise<T> {
	const release = conn.holdOpen();
	try {
		return await work();
	} finally {
		release();
	}
}
