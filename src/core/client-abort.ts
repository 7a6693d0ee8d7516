/**
 * The caller closed the connection before its request was read: Bun aborts the request's signal and
 * rejects the body read with an AbortError. Both must hold, so a real failure is never hidden.
 */
export function isClientAbort(req: Request, err: unknown): boolean {
	return req.signal.aborted && err instanceof Error && err.name === "AbortError";
}
