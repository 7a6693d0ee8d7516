/**
 * A token per round for the MCP bench's `tools/call` load. Every call is paid from its token's audit budget
 * (src/audit/budget.ts: 6 MiB at once, then 8 KiB/s), and one round of call cells spends a few MB, so a run
 * on one token is refused (`audit_budget`) from its third or fourth round. Each round's calls therefore go
 * under a named token of their own, added with `/a2a token add` after the last one was revoked, so one named
 * token is live beside the owner at a time: the owner keeps its share of 32 sessions for the ×32 cells.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AUDIT_BURST_BYTES, AUDIT_RATE_BYTES_PER_S } from "../src/audit/budget.ts";
import { budgetPath, parseBuckets } from "../src/audit/budget-file.ts";
import type { Host } from "../test/helpers/host.ts";
import { CORE_AUDIT_FILE } from "./core.ts";

/** The secret `/a2a token add` shows once, as the line after its notice. */
async function added(host: Host, name: string, before: number): Promise<string> {
	const deadline = Date.now() + 20_000;
	for (;;) {
		const notice = host
			.notifications()
			.slice(before)
			.find(m => m.includes(`token '${name}' is live`));
		const secret = notice?.split("\n")[1]?.trim();
		if (secret) return secret;
		if (Date.now() > deadline) throw new Error(`no secret for '${name}': ${host.notifications().slice(before)}`);
		await Bun.sleep(20);
	}
}

/** The named tokens of the bridge in the host, one live at a time. */
export class RoundTokens {
	readonly #host: Host;
	#live: string | undefined;

	constructor(host: Host) {
		this.#host = host;
	}

	/** Revokes the token live now, adds `name` and resolves its secret. */
	async next(name: string): Promise<string> {
		if (this.#live !== undefined) await this.#host.command(`/a2a token revoke ${this.#live}`);
		const before = this.#host.notifications().length;
		await this.#host.command(`/a2a token add ${name}`);
		this.#live = name;
		return added(this.#host, name, before);
	}
}

/** The core's named tokens (bench/core.ts, in the host): all configured at its start, one used per round. */
export const coreTokens = (rounds: number): Array<{ name: string; token: string }> =>
	Array.from({ length: rounds + 1 }, (_, i) => ({
		name: i === 0 ? "core-warm" : `core-r${i}`,
		token: (crypto.randomUUID() + crypto.randomUUID()).replaceAll("-", ""),
	}));

/** What `name` has left of its audit budget on the log at `auditPath` now, in MiB (full when it has no line). */
export function budgetLeftMiB(auditPath: string, name: string): number {
	const path = budgetPath(auditPath);
	const text = existsSync(path) ? readFileSync(path, "utf8") : "";
	const b = parseBuckets(text, AUDIT_BURST_BYTES).get(name);
	const level =
		b === undefined
			? AUDIT_BURST_BYTES
			: Math.min(AUDIT_BURST_BYTES, b.level + (Math.max(0, Date.now() - b.at) * AUDIT_RATE_BYTES_PER_S) / 1000);
	return level / (1024 * 1024);
}

/** The core's audit log in the host's home (bench/probe-ext.ts serves the core with `home` = the host's). */
export const coreAuditPath = (host: Host): string => join(host.home, CORE_AUDIT_FILE);
