/**
 * Named tokens for the MCP bench's `tools/call` load. Every call is paid from its token's audit budget
 * (src/audit/budget.ts: 6 MiB at once, then 8 KiB/s), and one round of call cells spends about 2 MiB, so a run
 * on one token is refused (`audit_budget`) from its fourth or fifth round. The calls go under named tokens,
 * added with `/a2a token add` after the last one was revoked, so one named token is live beside the owner at
 * a time: the owner keeps its share of 32 sessions for the ×32 cells.
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

/** A named token of the bridge in the host, one live at a time: the one before is revoked, `name` added. */
export function hostTokens(host: Host): () => Promise<{ name: string; secret: string }> {
	let n = 0;
	return async () => {
		if (n > 0) await host.command(`/a2a token revoke bench-${n}`);
		const name = `bench-${++n}`;
		const before = host.notifications().length;
		await host.command(`/a2a token add ${name}`);
		return { name, secret: await added(host, name, before) };
	};
}

/**
 * The token a step's calls go under (a step: the warm-up, a round). It is kept while it has left what the
 * dearest step so far spent, half again and 0.5 MiB, and replaced before that: few tokens are ever busy,
 * so the shared budget file the calls read and rewrite stays near one user's (bench/budget-lines.ts).
 */
export class StepToken {
	readonly #fresh: () => Promise<{ name: string; secret: string }>;
	readonly #left: (name: string) => number;
	#name = "";
	#secret = "";
	#before = 0;
	#most = 0;
	/** Per step: the token's name and the MiB the step took from it. */
	readonly spent: string[] = [];

	constructor(fresh: () => Promise<{ name: string; secret: string }>, leftMiB: (name: string) => number) {
		this.#fresh = fresh;
		this.#left = leftMiB;
	}

	get secret(): string {
		return this.#secret;
	}

	/** Before a step: a fresh token when the live one may not pay for it. */
	async begin(): Promise<void> {
		if (this.#name === "" || this.#left(this.#name) < 1.5 * this.#most + 0.5) {
			const t = await this.#fresh();
			[this.#name, this.#secret] = [t.name, t.secret];
		}
		this.#before = this.#left(this.#name);
	}

	/** After it: what it took (net of the refill meanwhile) is the next step's estimate. */
	end(label: string): void {
		const took = this.#before - this.#left(this.#name);
		this.#most = Math.max(this.#most, took);
		this.spent.push(`${label} ${(Math.abs(took) < 0.05 ? 0 : took).toFixed(1)} on ${this.#name}`);
	}
}

/** The core's named tokens (bench/core.ts, in the host), all configured at its start, handed out in turn. */
export function coreTokens(steps: number): {
	tokens: Array<{ name: string; token: string }>;
	fresh: () => Promise<{ name: string; secret: string }>;
} {
	const tokens = Array.from({ length: steps }, (_, i) => ({
		name: `core-${i + 1}`,
		token: (crypto.randomUUID() + crypto.randomUUID()).replaceAll("-", ""),
	}));
	let i = 0;
	return {
		tokens,
		fresh: async () => {
			const t = tokens[Math.min(i++, tokens.length - 1)];
			if (t === undefined) throw new Error("no core token");
			return { name: t.name, secret: t.token };
		},
	};
}

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
