/**
 * Whether a client restarts its per-call timer on progress, measured (not run by `npm run test:clients`:
 * about 4 minutes; run it by hand after the matrix installed the clients, see docs/testing.md). Each agent
 * CLI's timeout is set to TIMER_S, below the bridge's 5 s heartbeat, and two 12 s calls are made: one that
 * prints every second (progress at each output when the call carries a progress token) and one that is
 * silent. A client that restarts on progress completes the first and times out on the second; one that
 * does not times out on both. Prints one line per client; asserts only the control (the silent call).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Host, useSharedHost } from "../helpers/host.ts";
import { CLIENTS, type MatrixClient, unavailable } from "./clients.ts";
import { runClient } from "./run-client.ts";
import { askedForProgress } from "./wire.ts";

/** Below the bridge's 5 s progress heartbeat: only output (every second) can restart such a timer. */
const TIMER_S = 3;
const CALL_S = 12;

let host: Host;
useSharedHost({}, h => {
	host = h.host;
});

/** The client's documented setup with its per-call timeout set to TIMER_S, the way its own config names it. */
const codexTimer = (home: string): void => {
	const f = join(home, ".codex", "config.toml");
	writeFileSync(f, `${readFileSync(f, "utf8")}tool_timeout_sec = ${TIMER_S}\n`);
};

const withTimer: Record<string, (home: string) => void> = {
	codex: codexTimer,
	"codex-2026": codexTimer,
	opencode: home => {
		const f = join(home, ".config", "opencode", "opencode.json");
		const cfg = JSON.parse(readFileSync(f, "utf8"));
		cfg.mcp.omp_host.timeout = TIMER_S * 1000;
		writeFileSync(f, JSON.stringify(cfg, null, 2));
	},
	copilot: home => {
		const f = join(home, ".copilot", "mcp-config.json");
		const cfg = JSON.parse(readFileSync(f, "utf8"));
		cfg.mcpServers.omp_host.timeout = TIMER_S * 1000;
		writeFileSync(f, JSON.stringify(cfg, null, 2));
	},
	gemini: home => {
		const f = join(home, ".gemini", "settings.json");
		const cfg = JSON.parse(readFileSync(f, "utf8"));
		cfg.mcpServers.omp_host.timeout = TIMER_S * 1000;
		writeFileSync(f, JSON.stringify(cfg, null, 2));
	},
};

async function run(c: MatrixClient, command: string) {
	const o = await runClient(host, c, {
		secret: host.token,
		command,
		extraArgs: { timeout: CALL_S + 60 },
		timeoutMs: (CALL_S + 90) * 1000,
		patch: withTimer[c.id],
		status: false,
	});
	return {
		seconds: o.seconds,
		progress: askedForProgress(o.records),
		results: o.toolResults.join(" | "),
		output: o.output.slice(-600),
	};
}

describe(`per-call timer set to ${TIMER_S} s, calls of ${CALL_S} s`, () => {
	for (const c of CLIENTS.filter(x => x.id in withTimer)) {
		const why = unavailable(c);
		(why === null ? test : test.skip)(
			`${c.title}${why ? ` — skipped: ${why}` : ""}`,
			async () => {
				const ticking = await run(c, `for i in $(seq 1 ${CALL_S}); do echo tick $i; sleep 1; done`);
				// The marker is computed so that only the output, not the command text, holds it.
				const silent = await run(c, `sleep ${CALL_S}; echo silent-$((40+2))-done`);
				const finished = (r: { results: string }, marker: string) => r.results.includes(marker);
				// What the client handed its model after the call: the end of the conversation it sent.
				const seen = (r: { results: string }) => r.results.slice(-240).replace(/\s+/g, " ");
				console.log(
					`${c.title}: asked for progress ${ticking.progress}; ticking call ${finished(ticking, `tick ${CALL_S}`) ? "completed" : "did not complete"} (${ticking.seconds.toFixed(0)} s: …${seen(ticking)}); silent call ${finished(silent, "silent-42-done") ? "completed" : "did not complete"} (${silent.seconds.toFixed(0)} s: …${seen(silent)})`,
				);
				// The control: with the timer set, a silent call longer than it must not complete.
				expect(finished(silent, "silent-42-done"), silent.output).toBe(false);
			},
			600_000,
		);
	}
});
