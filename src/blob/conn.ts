/**
 * The one place `/blob` reaches the connection (core/idle.ts): its idle timer held off while work that
 * may take long runs, closed soon on a stalled sender, and whether Bun has finished sending a response.
 */
import { closeSoon, holdOpen, requestDone } from "../core/idle.ts";

/** Runs `work` with the connection's idle timer off (a long transfer or hash), on again after. */
export async function holding<T>(req: Request, work: () => Promise<T>): Promise<T> {
	const release = holdOpen(req);
	try {
		return await work();
	} finally {
		release();
	}
}

export const cutSoon = (req: Request): void => closeSoon(req);
export const sent = (req: Request): boolean | null => requestDone(req);
