/**
 * Whether a client restarts its per-call timer on progress, measured (not run by `npm run test:clients`:
 * about 4 minutes; run it by hand after the matrix installed the clients, see docs/testing.md). For each
 * agent CLI whose timeout can be set, the timeout is set to TIMER_S and two calls of 2 × TIMER_S are
 * made: one that prints every second (the bridge sends progress when the call carries a progress token)
 * and one that is silent. The wire says whether the call asked for progress; the scripted model records
 * what the client handed back as the tool's result. Prints one line per client; asserts only the control.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Host, useSharedHost } from "../helpers/host.ts";
import { binOf, CLIENTS, type MatrixClient, unavailable } from "./clients.ts";
import type { Driver } from "./drivers.ts";
import { startModelStub } from "./model-stubs.ts";
import { askedForProgress, startWireRecorder } from "./wire.ts";

const TIMER_S = 15;
const CALL_S = 2 * TIMER_S;

let host: Host;
useSharedHost({}, h => {
	host = h.host;
});

/** The client's documented setup with its per-call timeout set to TIMER_S, the way its own config names it. */
const withTimer: Record<string, (home: string) => void> = {
	codex: home => {
		const f = join(home, ".codex", "config.toml");
		writeFileSync(f, `${readFileSync(f, "utf8")}tool_timeout_sec = ${TIMER_S}\n`);
	},
	opencode: home => {
		const f = join(home, ".config", "opencode", "opencode.json");
		const cfg = JSON.parse(readFileSync(f, "utf8"));
		cfg.mcp.omp_host.timeout = TIMER_S * 1000;
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
	const home = mkdtempSync(join(tmpdir(), `a2a-timer-${c.id}-`));
	const cwd = join(home, "work");
	mkdirSync(cwd);
	const rec = startWireRecorder(host.url);
	const stub = startModelStub({ server: "omp_host", command, extraArgs: { timeout: CALL_S + 60 } });
	const patch = withTimer[c.id];
	const driver: Driver = {
		async prepare(ctx) {
			const r = await c.driver.prepare(ctx);
			patch?.(ctx.home);
			return r;
		},
	};
	try {
		const r = await driver.prepare({
			home,
			cwd,
			url: rec.url,
			secret: host.token,
			model: stub.base,
			bin: binOf(c),
			command,
			server: "omp_host",
		});
		const t0 = Date.now();
		const p = Bun.spawn(r.cmd, {
			env: r.env,
			cwd,
			stdin: "ignore",
			stdout: "pipe",
			stderr: "pipe",
			timeout: (CALL_S + 90) * 1000,
			killSignal: "SIGKILL",
		});
		const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
		await p.exited;
		return {
			seconds: (Date.now() - t0) / 1000,
			progress: askedForProgress(rec.records),
			results: stub.toolResults.join(" | ").slice(0, 300),
			output: `${out}\n${err}`.slice(-600),
		};
	} finally {
		stub.stop();
		await rec.stop();
		rmSync(home, { recursive: true, force: true });
	}
}

describe(`per-call timer set to ${TIMER_S} s, calls of ${CALL_S} s`, () => {
	for (const c of CLIENTS.filter(x => x.id in withTimer)) {
		const why = unavailable(c);
		(why === null ? test : test.skip)(
			`${c.title}${why ? ` — skipped: ${why}` : ""}`,
			async () => {
				const ticking = await run(c, `for i in $(seq 1 ${CALL_S}); do echo tick $i; sleep 1; done`);
				const silent = await run(c, `sleep ${CALL_S}; echo silent-done`);
				const finished = (r: { results: string }, marker: string) => r.results.includes(marker);
				console.log(
					`${c.title}: asked for progress ${ticking.progress}; ticking call ${finished(ticking, `tick ${CALL_S}`) ? "completed" : "did not complete"} (${ticking.seconds.toFixed(0)} s: ${ticking.results}); silent call ${finished(silent, "silent-done") ? "completed" : "did not complete"} (${silent.seconds.toFixed(0)} s: ${silent.results})`,
				);
				// The control: with the timer set, a silent call longer than it must not complete.
				expect(finished(silent, "silent-done"), silent.output).toBe(false);
			},
			600_000,
		);
	}
});
