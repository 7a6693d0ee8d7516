/**
 * Load, fuzz and faults against the real host. CI runs reduced sizes; A2A_FULL=1 runs the sizes of
 * the issue (10,000 + 10,000 calls over 64 sessions, 20,000 fuzz requests).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { buildRequest, requestArb, type Sample } from "../../helpers/arbitraries.ts";
import { callTool, canConnect, type Host, openSession, rpcPost, useSharedHost, withHost } from "../../helpers/host.ts";
import { runLoadInChild } from "../../helpers/loadgen.ts";
import { procStatus, StoppableWork } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const FULL = process.env.A2A_FULL === "1";
const LOAD_PER_KIND = FULL ? 10_000 : 2_000;
const FUZZ_REQUESTS = FULL ? 20_000 : 4_000;

const fdCount = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const MiB = 1024 * 1024;

/** The host's fds and RSS once they stop moving (three probes 100 ms apart agree), bounded at 10 s. */
async function quiet(pid: number): Promise<{ rss: number; fds: number }> {
	const probes: { rss: number; fds: number }[] = [];
	return waitFor(
		"the host's fd count and RSS to settle after the warm-up",
		() => {
			probes.push({ rss: procStatus(pid, "VmRSS"), fds: fdCount(pid) });
			const [a, b, c] = probes.slice(-3);
			if (!a || !b || !c) return false;
			const steady = [b, c].every(p => p.fds === a.fds && Math.abs(p.rss - a.rss) <= MiB);
			return steady && c;
		},
		{ timeoutMs: 10_000, everyMs: 100, seen: () => JSON.stringify(probes.slice(-3)) },
	);
}

describe("load", () => {
	// Sixteen live tokens (the owner and 15 named) hold 4 sessions each, all 64: one token alone would meet its
	// audit budget (contract §19, security.md "The audit log as evidence"), which bounds one token's sustained rate.
	const NAMED = Array.from({ length: 15 }, (_, i) => ({ name: `load${i}`, token: `load${i}-${"x".repeat(40)}` }));
	let host: Host;
	useSharedHost({ config: { tokens: NAMED } }, h => ({ host } = h));

	test(`${LOAD_PER_KIND} tools/call read + ${LOAD_PER_KIND} tools/list over 64 sessions of 16 tokens: no errors, RSS and fds back`, async () => {
		const file = join(host.cwd, "small.txt");
		writeFileSync(file, "a small file\nfor the load test\n");
		const tokens = [host.token, ...NAMED.map(t => t.token)];
		const spec = {
			url: host.url,
			sessions: 4,
			messages: [
				{ method: "tools/call", params: { name: "read", arguments: { path: file } } },
				{ method: "tools/list" },
			],
		};
		const all = async (perSession: number) => {
			const runs = await Promise.all(tokens.map(token => runLoadInChild({ ...spec, token, perSession })));
			const seconds = Math.max(...runs.map(x => x.seconds));
			const requests = runs.reduce((n, x) => n + x.requests, 0);
			return {
				errors: runs.reduce((n, x) => n + x.errors, 0),
				firstError: runs.find(x => x.firstError !== undefined)?.firstError,
				requests,
				seconds,
				rps: requests / seconds,
				p50ms: Math.max(...runs.map(x => x.p50ms)),
				p99ms: Math.max(...runs.map(x => x.p99ms)),
			};
		};
		// Warm up JIT and allocator pools first, so "before" is a steady state, not a cold start.
		const warm = await all(20);
		expect(warm.errors).toBe(0);
		const pid = host.proc.pid;
		const { rss: rssBefore, fds: fdsBefore } = await quiet(pid);
		const r = await all(Math.ceil((2 * LOAD_PER_KIND) / 64));
		expect(r.firstError).toBeUndefined();
		expect(r.errors).toBe(0);
		expect(r.requests).toBeGreaterThanOrEqual(2 * LOAD_PER_KIND);
		// "Back" is a state the host reaches once the load's sockets are closed: poll for it, bounded.
		const back = await waitFor(
			"the host's fds back to their count before the load and RSS within 32 MiB of it",
			() => {
				const now = { rss: procStatus(pid, "VmRSS"), fds: fdCount(pid) };
				return now.fds <= fdsBefore && now.rss - rssBefore <= 32 * MiB && now;
			},
			{
				timeoutMs: 20_000,
				everyMs: 100,
				seen: () => `fds ${fdCount(pid)} (before ${fdsBefore}), RSS ${procStatus(pid, "VmRSS")}`,
			},
		).catch(() => ({ rss: procStatus(pid, "VmRSS"), fds: fdCount(pid) }));
		const rssAfter = back.rss;
		const fdsAfter = back.fds;
		console.log(
			`load: ${r.requests} requests in ${r.seconds.toFixed(1)} s (${r.rps.toFixed(0)}/s, p50 ${r.p50ms.toFixed(2)} ms, ` +
				`p99 ${r.p99ms.toFixed(2)} ms); RSS ${(rssBefore / MiB).toFixed(1)} -> ${(rssAfter / MiB).toFixed(1)} MiB; ` +
				`fds ${fdsBefore} -> ${fdsAfter}`,
		);
		expect(rssAfter - rssBefore).toBeLessThanOrEqual(32 * MiB);
		expect(fdsAfter).toBeLessThanOrEqual(fdsBefore);
	}, 600_000);
});

describe("end-to-end fuzz", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	/** Fuzz bodies may name tools; only `read` (and unknown names) may reach a real host. */
	const isSafe = (s: Sample): boolean => {
		if (typeof s.body !== "string" || !s.body.includes("tools/call")) return true;
		try {
			const name = (JSON.parse(s.body) as { params?: { name?: unknown } })?.params?.name;
			return typeof name !== "string" || name === "read" || !/^[a-z_]+$/.test(name);
		} catch {
			return true;
		}
	};

	test(`${FUZZ_REQUESTS} hostile requests: the host stays up and answers a clean call afterwards`, async () => {
		const sid = await openSession(host);
		const base = `http://127.0.0.1:${host.port}`;
		const samples = fc.sample(requestArb(host.token), FUZZ_REQUESTS * 2).filter(isSafe);
		let sent = 0;
		const statuses = new Map<number, number>();
		const dropped: string[] = [];
		let unsendable = 0;
		const batch = 32;
		for (let i = 0; i < samples.length && sent < FUZZ_REQUESTS; i += batch) {
			await Promise.all(
				samples.slice(i, i + batch).map(async s => {
					const req = buildRequest(s, base, sid);
					if (req === null) return;
					// fetch refuses some requests before sending (a body with a method it treats as GET):
					// not sent, not counted. A connection dropped or reset is a failure, shown, not skipped.
					const res = await fetch(req).catch((err: unknown) => {
						if ((err as { code?: string }).code === "ERR_INVALID_ARG_VALUE") unsendable++;
						else {
							sent++;
							dropped.push(`${s.method} ${s.path}: ${String(err)}`);
						}
						return null;
					});
					if (res === null) return;
					sent++;
					statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
					await res.body?.cancel();
				}),
			);
		}
		console.log(
			`fuzz: ${sent} requests (${unsendable} more refused by fetch itself), statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
		);
		expect(sent).toBeGreaterThanOrEqual(FUZZ_REQUESTS);
		expect(dropped.slice(0, 5)).toEqual([]);
		expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(sent);
		expect(statuses.get(500) ?? 0).toBe(0);
		expect(host.proc.exitCode).toBeNull();
		const clean = await callTool(host, await openSession(host), "bash", { command: "echo alive-after-fuzz" });
		expect(JSON.stringify(clean.body)).toContain("alive-after-fuzz");
		expect(host.frames.filter(f => f.type === "non_json_stdout")).toEqual([]);
	}, 600_000);
});

describe("faults", () => {
	test("host shutdown with a call in flight: the caller gets an answer or a closed connection, audit has the start, the process is killed, port released", async () => {
		await withHost({}, async host => {
			const sid = await openSession(host);
			const work = new StoppableWork(host.cwd);
			try {
				const pending = callTool(host, sid, "bash", { command: work.command }).then(
					r => ({ answered: r.body }),
					err => ({ closed: String(err) }),
				);
				await work.running();
				host.proc.stdin.end();
				await host.proc.exited;
				await work.stopped();
				const outcome = await pending;
				if ("answered" in outcome)
					expect(outcome.answered.error).toEqual({ code: -32800, message: "request cancelled" });
				const audit = readFileSync(host.auditPath, "utf8");
				expect(audit.split("\n").some(l => l.includes(work.marker) && l.includes('"phase":"start"'))).toBe(true);
				expect(await canConnect(host.port)).toBe(false);
			} finally {
				work.cleanup();
			}
		});
	}, 60_000);

	test("a tool that throws -> isError with its message; the bridge goes on", async () => {
		await withHost({}, async host => {
			const sid = await openSession(host);
			const r = await callTool(host, sid, "read", { path: join(host.cwd, "does-not-exist.txt") });
			const result = r.body.result as { isError: boolean; content: Array<{ text: string }> };
			expect(r.status).toBe(200);
			expect(result.isError).toBe(true);
			expect(result.content[0]?.text.length).toBeGreaterThan(0);
			const ok = await callTool(host, sid, "bash", { command: "echo next" });
			expect(JSON.stringify(ok.body)).toContain("next");
		});
	}, 60_000);

	test("a client that disconnects mid-response: the call runs to its end and is audited, the host goes on", async () => {
		await withHost({}, async host => {
			const sid = await openSession(host);
			const marker = `disc-${crypto.randomUUID().slice(0, 8)}`;
			const ctl = new AbortController();
			const res = await fetch(host.url, {
				method: "POST",
				headers: host.headers({ "mcp-session-id": sid, accept: "text/event-stream" }),
				body: JSON.stringify({
					jsonrpc: "2.0",
					id: 5,
					method: "tools/call",
					params: {
						name: "bash",
						arguments: { command: `for i in 1 2 3 4; do echo ${marker}-$i; sleep 0.3; done; touch ${marker}` },
						_meta: { progressToken: 1 },
					},
				}),
				signal: ctl.signal,
			});
			expect(res.headers.get("content-type")).toBe("text/event-stream");
			const reader = res.body?.getReader();
			expect((await reader?.read())?.done).toBe(false);
			// The connection goes away mid-stream: the next read fails with the abort, not a result.
			ctl.abort();
			expect(
				await reader?.read().then(
					() => "read on",
					(err: unknown) => (err as Error).name,
				),
			).toBe("AbortError");
			const done = () =>
				readFileSync(host.auditPath, "utf8")
					.split("\n")
					.filter(l => l.includes(marker) && l.includes('"phase":"done"'));
			await waitFor(`the done record of ${marker}`, () => done().length > 0, { timeoutMs: 10_000 });
			// A 2025-era disconnect does not cancel: the command ran to its last step.
			expect(JSON.parse(done()[0] ?? "{}")).toMatchObject({ isError: false });
			expect(JSON.parse(done()[0] ?? "{}").cancelled).toBeUndefined();
			expect(existsSync(join(host.cwd, marker))).toBe(true);
			const ok = await callTool(host, sid, "bash", { command: "echo after-disconnect" });
			expect(JSON.stringify(ok.body)).toContain("after-disconnect");
		});
	}, 60_000);

	test("a config file that becomes unreadable: /a2a rotate acts in the host first, names the file it could not write", async () => {
		await withHost({}, async host => {
			const sid = await openSession(host);
			rmSync(host.configPath);
			mkdirSync(host.configPath);
			await host.command("/a2a rotate");
			const msg = host.notifications().find(m => m.includes("in this host only")) ?? "";
			expect(msg).toContain(host.configPath);
			expect(msg).toContain("still holds the old secret");
			// The old secret and its session are refused at once (contract: revoke and rotate act live first).
			const ping = await rpcPost(host, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": sid });
			expect(ping.status).toBe(401);
			await host.command("/a2a token");
			const secret = host
				.notifications()
				.reverse()
				.find(m => /^[A-Za-z0-9_-]{20,}$/.test(m.trim()))
				?.trim();
			expect(secret).toBeDefined();
			expect(secret).not.toBe(host.token);
			await openSession(host, "2025-11-25", { secret });
			expect(statSync(host.configPath).isDirectory()).toBe(true);
		});
	}, 60_000);
});
