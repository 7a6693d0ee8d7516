/**
 * The one way a thrown value becomes text: an Error's message (its name when the message is empty),
 * a string as it is, anything else `otherwise` or String(value).
 */
export function errorText(err: unknown, otherwise?: string): string {
	if (err instanceof Error) return err.message || err.name;
	if (typeof err === "string") return err;
	return otherwise ?? String(err);
}

/** The same with the stack where there is one: for host stderr only, never for a caller. */
export function errorDetail(err: unknown): string {
	return err instanceof Error && err.stack ? err.stack : errorText(err);
}
