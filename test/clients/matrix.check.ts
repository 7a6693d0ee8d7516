/**
 * Every client in the matrix against one real host: configured as its docs say, it connects, lists
 * and calls `bash`; the command really ran (a marker file), the audit names the call, and the era it
 * spoke is read from the wire. A wrong token fails clearly and runs nothing. One client that restarts
 * its timer on progress completes a call longer than its default timeout.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Host, useSharedHost } from "../helpers/host.ts";
import { CLIENTS, unavailable } from "./clients.ts";
import { library } from "./drivers.ts";
import { type Outcome, runClient } from "./run-client.ts";
import { eraOfCall } from "./wire.ts";

/** Seconds the long call runs: past the TypeScript SDK's 60 s default. */
const LONG_S = Number(process.env.A2A_CLIENTS_LONG_S ?? 70);
/** The scripted model gives each `bash` call a timeout past the long call's length. */
const EXTRA = { timeout: LONG_S + 120 };

let host: Host;
useSharedHost({}, h => {
	host = h.host;
});

function auditMentions(text: string): boolean {
	if (!existsSync(host.auditPath)) return false;
	return readFileSync(host.auditPath, "utf8")
		.split("\n")
		.some(l => l.includes(`"phase":"done"`) && l.includes(`"tool":"bash"`) && l.includes(text));
}

const tail = (o: Outcome): string =>
	`exit ${o.code}; wire ${JSON.stringify(o.records)}; output: ${o.output.slice(-1500)}`;

describe("client matrix (real host, scripted model on loopback)", () => {
	for (const c of CLIENTS) {
		const why = unavailable(c);
		if (why !== null) {
			test.skip(`${c.title}: skipped — ${why}`, () => {});
			continue;
		}
		test(`${c.title}: connects, lists, calls bash -> the marker file exists, audited, era ${c.era}`, async () => {
			const marker = join(host.home, `marker-${c.id}-${crypto.randomUUID()}`);
			const o = await runClient(host, c, { secret: host.token, command: `touch ${marker}`, extraArgs: EXTRA });
			expect(existsSync(marker), tail(o)).toBe(true);
			expect(auditMentions(marker.split("/").pop() ?? marker), tail(o)).toBe(true);
			expect(eraOfCall(o.records), tail(o)).toBe(c.era);
		}, 180_000);

		test(`${c.title}: a wrong token -> 401 on the wire, a failure it reports, nothing runs`, async () => {
			const marker = join(host.home, `wrong-${c.id}-${crypto.randomUUID()}`);
			const o = await runClient(host, c, {
				secret: `wrong-${crypto.randomUUID()}${crypto.randomUUID()}`,
				command: `touch ${marker}`,
				extraArgs: EXTRA,
			});
			// What the troubleshooting list names per client: every request it tried and the status it got.
			const said = o.output.split("\n").find(l => /40[15]|unauthori[sz]ed/i.test(l)) ?? "";
			console.log(
				`${c.title}: wrong token, wire: ${o.records.map(r => `${r.http} ${r.method ?? "-"} ${r.status}`).join(", ")}; it says: ${said.trim().slice(0, 200)}`,
			);
			expect(existsSync(marker), tail(o)).toBe(false);
			expect(
				o.records.some(r => r.status === 401),
				tail(o),
			).toBe(true);
			expect(o.records.some(r => r.status === 200)).toBe(false);
			// Where the client shows it: its run's own output, or (agent CLIs that go on without the server) `mcp list`.
			expect(`${o.output}\n${o.status}`, `${tail(o)}; status: ${o.status}`).toMatch(
				/401|unauthori[sz]ed|invalid_token|authenticat|fail|error|disconnected/i,
			);
		}, 180_000);
	}

	// The TypeScript SDK 2 waits 60 s by default and restarts that timer on progress when asked to.
	const sdk = CLIENTS.find(c => c.id === "ts-sdk-2");
	const sdkWhy = sdk ? unavailable(sdk) : "not in the matrix";
	(sdkWhy === null ? test : test.skip)(
		`TypeScript SDK 2: a ${LONG_S} s bash that prints every second completes past its 60 s default (progress restarts its timer)${sdkWhy ? ` — skipped: ${sdkWhy}` : ""}`,
		async () => {
			if (!sdk) return;
			const marker = join(host.home, `long-${crypto.randomUUID()}`);
			const cmd = `for i in $(seq 1 ${LONG_S}); do echo tick $i; sleep 1; done; touch ${marker}`;
			const o = await runClient(
				host,
				{ ...sdk, driver: library("ts-sdk-2-long") },
				{ secret: host.token, command: cmd, extraArgs: EXTRA, timeoutMs: (LONG_S + 120) * 1000 },
			);
			expect(o.code, tail(o)).toBe(0);
			expect(existsSync(marker), tail(o)).toBe(true);
			// The final output reached the client: not a -32001 timeout at 60 s.
			expect(o.output, tail(o)).toContain(`tick ${LONG_S}`);
			expect(eraOfCall(o.records), tail(o)).toBe("2026-07-28");
		},
		(LONG_S + 180) * 1000,
	);
});
