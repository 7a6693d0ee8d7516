/** The detail of an error for host stderr (never for a caller). */
export function describe(err: unknown): string {
	return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
