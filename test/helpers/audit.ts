/** The host's audit log read as records: the second channel most e2e tests check a call against. */
import { existsSync, readFileSync } from "node:fs";

export type AuditEntry = Record<string, unknown>;

/**
 * Every record of the log at `from` (a host, or a path), oldest first; [] while the file does not
 * exist. `keep` narrows them: a predicate on the record, or text the raw line must contain.
 */
export function auditRecords<T = AuditEntry>(
	from: { auditPath: string } | string,
	keep?: string | ((r: T) => boolean),
): T[] {
	const path = typeof from === "string" ? from : from.auditPath;
	if (!existsSync(path)) return [];
	const text = readFileSync(path, "utf8");
	// Only whole lines: the host may be halfway through appending the last one.
	const lines = text
		.slice(0, text.lastIndexOf("\n") + 1)
		.split("\n")
		.filter(l => l !== "" && (typeof keep !== "string" || l.includes(keep)));
	const records = lines.map(l => JSON.parse(l) as T);
	return typeof keep === "function" ? records.filter(keep) : records;
}
