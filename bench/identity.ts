/**
 * The per-request cost of the identity re-check after the body (contract §16): `recheck` on a
 * live identity, the check every MCP request and every `/host-llm` POST now pays once its body is in.
 */
import { TokenSet } from "../src/config/auth.ts";
import { recheck } from "../src/core/gate.ts";

export function identityRecheckNs(rounds = 5, perRound = 2_000_000): number {
	const tokens = new TokenSet([{ name: "owner", token: "o".repeat(43) }]);
	const who = tokens.identify("o".repeat(43));
	if (who === null) throw new Error("token not found");
	const perCall: number[] = [];
	let refused = 0;
	for (let r = 0; r < rounds; r++) {
		const t0 = Bun.nanoseconds();
		for (let i = 0; i < perRound; i++) if (recheck(who, "mcp") !== undefined) refused++;
		perCall.push((Bun.nanoseconds() - t0) / perRound);
	}
	if (refused !== 0) throw new Error("a live identity was refused");
	return perCall.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? Number.NaN;
}

if (import.meta.main)
	console.log(`identity re-check after the body: ${identityRecheckNs().toFixed(2)} ns per request (median of 5)`);
