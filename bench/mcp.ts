/**
 * MCP rows of `bun run bench`, one host (the pinned omp with the bridge, bench/probe-ext.ts and the tasks
 * fixture loaded), every figure beside a reference measured in the same interleaved rounds:
 * - `ping` and `tools/list` at 1 and 32 sessions against the bare ceiling (bench/bare.ts, its own
 *   process) and the SDK reference (bench/sdk-reference.ts, serving the host's own catalog);
 * - `tools/call` split: the bridge's own path (its core with a real audit log over a fake host adapter,
 *   in the host process) against the bare reference in the same process; the host's part (adapter,
 *   tool-card events, the tool) as the real call against that fake; the real `read` against the same
 *   tool called in-process;
 * - the 2026-07-28 twins of `tools/list` ×32 and `tools/call read`;
 * - a console round trip through `hub` over HTTP against the same through `hub` called in-process;
 * - a task-augmented call (handle + first `tasks/get`) against the plain call.
 * The calls spend under named tokens, a few over the run (bench/round-tokens.ts); everything else under the owner's.
 * Alone: `bun bench/mcp.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Host, ROOT } from "../test/helpers/host.ts";
import { initialize, type LoadResult, type LoadSpec } from "../test/helpers/loadgen.ts";
import { startChild } from "./child.ts";
import { CONSOLE_PROGRAM } from "./console.ts";
import { identityRecheckNs } from "./identity.ts";
import { load } from "./load.ts";
import { budgetLeftMiB, coreAuditPath, coreTokens, hostTokens, StepToken } from "./round-tokens.ts";
import { atLeast, atMost, KNOBS, median, percentile, printTable, type Row, rotate, row, targetsLine } from "./table.ts";

/** Floor on requests per run, in case the warm-up that sizes the runs was slowed by other load. */
const MIN_REQUESTS = 500;
const PROBE = join(import.meta.dir, "probe-ext.ts");
const TASKS_FIXTURE = join(ROOT, "test", "fixtures", "tasks-fixture-ext.ts");
const SMALL_FILE_REL = "work/small.txt";
const SMALL_FILE_TEXT = Array.from(
	{ length: 24 },
	(_, i) => `line ${i + 1}: a small file for the read benchmark\n`,
).join("");
const CONSOLE = "bench-console";
/** The 2026-07-28 cells and their 2025 twins: as many requests of each era as the twin sends alone. */
const TWINS = [
	["list-32 modern", "list-32 bridge", 1],
	["call read eras", "call read", 2],
] as const;

const statusMiB = (pid: number, field: "VmRSS" | "VmHWM"): number => {
	const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
	return Number(m[1]) / 1024;
};

/** Runs `/bench-probe` in the host and reads the line it writes to stderr. */
export async function probe<T>(host: Host, spec: Record<string, unknown>): Promise<T> {
	const tag = crypto.randomUUID();
	await host.command(`/bench-probe ${tag} ${JSON.stringify(spec)}`, 600_000).catch(() => {});
	const re = new RegExp(`^BENCH-PROBE ${tag} (.*)$`, "m");
	const deadline = Date.now() + 600_000;
	for (;;) {
		const line = re.exec(host.stderr)?.[1];
		if (line !== undefined) {
			const out = JSON.parse(line) as T & { error?: string };
			if (out.error) throw new Error(`probe ${JSON.stringify(spec)}: ${out.error}`);
			return out;
		}
		if (Date.now() > deadline)
			throw new Error(`no BENCH-PROBE line from the host; stderr: ${host.stderr.slice(-2000)}`);
		await Bun.sleep(20);
	}
}

/** The host's `tools/list` (2025 era) in a file, for the SDK reference to serve a list of the same size. */
export async function writeHostCatalog(host: Host): Promise<{ path: string; bytes: number }> {
	const headers = host.headers({ accept: "application/json, text/event-stream" });
	const sid = (await initialize(host.url, headers, "bench")) ?? "";
	const res = await fetch(host.url, {
		method: "POST",
		headers: { ...headers, "mcp-session-id": sid },
		body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
	});
	const tools = ((await res.json()) as { result: { tools: unknown[] } }).result.tools;
	const path = join(host.home, "catalog.json");
	writeFileSync(path, JSON.stringify(tools));
	return { path, bytes: JSON.stringify(tools).length };
}

interface Target {
	url: string;
	token: string;
	/** 2026-07-28: no session, the envelope and routing headers on every request. */
	modern?: boolean;
	/** Both eras in one run, request by request (test/helpers/loadgen.ts `alternate`). */
	alternate?: boolean;
	/** Its calls are paid from an audit budget: sent under the step's named token there, not `token`. */
	spends?: "host" | "core";
}

/** A closed-loop workload: where, how many sessions, which message. */
interface RpcCell {
	key: string;
	to: Target;
	sessions: number;
	messages: LoadSpec["messages"];
	/**
	 * A twin measured with this cell in alternating slices (A B B A ...), so the drift of a busy machine
	 * and the host's GC pauses fall on both alike; closed loops of one era each keep the queue honest.
	 */
	twin?: RpcCell;
}

/** Slices per run of a cell with a twin. */
const SLICES = 4;

/** Slices of one run as one result: their sums, and the median of their percentiles. */
function merged(parts: LoadResult[]): LoadResult {
	const requests = parts.reduce((a, r) => a + r.requests, 0);
	const seconds = parts.reduce((a, r) => a + r.seconds, 0);
	const errors = parts.reduce((a, r) => a + r.errors, 0);
	const firstError = parts.find(r => r.firstError)?.firstError;
	return {
		requests,
		errors,
		...(firstError ? { firstError } : {}),
		seconds,
		rps: requests / seconds,
		p50ms: median(parts.map(r => r.p50ms)),
		p99ms: median(parts.map(r => r.p99ms)),
	};
}

export interface McpBench {
	rows: Row[];
	notes: string[];
}

export async function runMcpBench(
	rounds = KNOBS.rounds,
	seconds = KNOBS.seconds,
	trips = KNOBS.trips,
): Promise<McpBench> {
	let host: Host | undefined;
	const children: Array<{ stop(): Promise<void> }> = [];
	try {
		console.log(
			`mcp bench: ${rounds} interleaved rounds, ~${seconds} s per load run, ${trips} console trips and task pairs per round`,
		);
		host = await Host.start({
			args: ["-e", PROBE, "-e", TASKS_FIXTURE],
			files: { [SMALL_FILE_REL]: SMALL_FILE_TEXT },
			// Every declaring call becomes a task (a 5 ms tool can end before even a 0 ms timer, counted apart).
			env: { A2A_BRIDGE_TASK_WINDOW_MS: "0" },
		});
		const h = host;
		const smallFile = join(h.home, SMALL_FILE_REL);
		const sdkToken = crypto.randomUUID() + crypto.randomUUID();
		const bareProc = await startChild("bare.ts");
		children.push(bareProc);
		const catalog = await writeHostCatalog(h);
		const sdkProc = await startChild("sdk-reference.ts", { SDK_REF_TOKEN: sdkToken, SDK_REF_CATALOG: catalog.path });
		children.push(sdkProc);
		const sameProc = await startChild("bare.ts", { BARE_TOKEN: sdkToken, BARE_CATALOG: catalog.path });
		children.push(sameProc);
		const readArgs = { path: smallFile };
		const core = coreTokens(rounds + 1);
		const inHost = await probe<{ bare: number; fake: number; same: number }>(h, {
			op: "serve",
			tool: "read",
			args: readArgs,
			token: h.token,
			tokens: core.tokens,
			catalog: catalog.path,
		});
		// The tokens the call cells spend under, per step (the warm-up, each round): bench/round-tokens.ts.
		const spend = {
			host: new StepToken(hostTokens(h), name => budgetLeftMiB(h.auditPath, name)),
			core: new StepToken(core.fresh, name => budgetLeftMiB(coreAuditPath(h), name)),
		};
		const steps = {
			begin: () => Promise.all([spend.host.begin(), spend.core.begin()]),
			end: (label: string) => [spend.host, spend.core].map(t => t.end(label)),
		};
		const hostBoot = { rss: statusMiB(h.proc.pid, "VmRSS"), hwm: statusMiB(h.proc.pid, "VmHWM") };

		const bridge: Target = { url: h.url, token: h.token };
		const bare: Target = { url: bareProc.url, token: sdkToken };
		const sdk: Target = { url: sdkProc.url, token: sdkToken };
		const same: Target = { url: sameProc.url, token: sdkToken };
		const inHostBare: Target = { url: `http://127.0.0.1:${inHost.bare}/`, token: h.token };
		const inHostSame: Target = { url: `http://127.0.0.1:${inHost.same}/`, token: h.token };
		const fake: Target = { url: `http://127.0.0.1:${inHost.fake}/`, token: h.token, spends: "core" };
		const calls: Target = { ...bridge, spends: "host" };
		const call = (name: string, args: Record<string, unknown>): LoadSpec["messages"] => [
			{ method: "tools/call", params: { name, arguments: args } },
		];
		const readMsg = call("read", readArgs);
		const rpcCells = (what: "ping" | "tools/list", sessions: number): RpcCell[] => {
			const key = `${what === "ping" ? "ping" : "list"}-${sessions}`;
			const cells = [
				{ key: `${key} same`, to: same, sessions, messages: [{ method: what }] },
				{ key: `${key} bare`, to: bare, sessions, messages: [{ method: what }] },
				{ key: `${key} in-host`, to: inHostBare, sessions, messages: [{ method: what }] },
				{ key: `${key} same in-host`, to: inHostSame, sessions, messages: [{ method: what }] },
				{ key: `${key} bridge`, to: bridge, sessions, messages: [{ method: what }] },
				{ key: `${key} sdk`, to: sdk, sessions, messages: [{ method: what }] },
			];
			if (key !== "list-32") return cells;
			const modern = { key: `${key} modern`, to: { ...bridge, modern: true }, sessions, messages: [{ method: what }] };
			return cells.map(c => (c.to === bridge ? { ...c, twin: modern } : c));
		};
		// Groups: the members of one group run back to back in a rotating order within each round.
		const groups: RpcCell[][] = [
			rpcCells("ping", 1),
			rpcCells("ping", 32),
			rpcCells("tools/list", 1),
			rpcCells("tools/list", 32),
			[
				{ key: "call in-host bare", to: inHostBare, sessions: 1, messages: readMsg },
				{ key: "call fake adapter", to: fake, sessions: 1, messages: readMsg },
				{ key: "call greet", to: calls, sessions: 1, messages: call("greet", { name: "bench" }) },
				{ key: "call read", to: calls, sessions: 1, messages: readMsg },
				{ key: "call read eras", to: { ...calls, alternate: true }, sessions: 1, messages: readMsg },
				{ key: "call sdk echo", to: sdk, sessions: 1, messages: call("echo", { text: "hi" }) },
			],
		];
		const run = (c: RpcCell, total: number): Promise<LoadResult> =>
			load({
				kind: "rpc",
				url: c.to.url,
				token: c.to.spends ? spend[c.to.spends].secret : c.to.token,
				sessions: c.sessions,
				perSession: Math.max(1, Math.ceil(total / c.sessions)),
				messages: c.messages,
				...(c.to.modern ? { modern: true } : {}),
				...(c.to.alternate ? { alternate: true } : {}),
			});

		// Warm-up, which also sizes each workload's runs to about `seconds` (the SDK's 55 KB tools/list is slow).
		await steps.begin();
		const counts: Record<string, number> = {};
		for (const c of groups.flat().flatMap(x => (x.twin ? [x, x.twin] : [x]))) {
			const r = await run(c, c.sessions === 1 ? 800 : 32 * 40);
			if (r.errors > 0) throw new Error(`warm-up ${c.key}: ${r.errors} errors, ${r.firstError}`);
			counts[c.key] = Math.ceil(Math.max(MIN_REQUESTS, seconds * r.rps) / c.sessions) * c.sessions;
		}
		for (const [cell, twin, times] of TWINS) counts[cell] = times * (counts[twin] ?? MIN_REQUESTS);
		const readCount = counts["call read"] ?? MIN_REQUESTS;
		await probe(h, { op: "exec", tool: "read", args: readArgs, n: 200 });
		const started = await load({
			kind: "rpc",
			url: h.url,
			token: h.token,
			sessions: 1,
			perSession: 1,
			messages: call("hub", { op: "start", name: CONSOLE, ...CONSOLE_PROGRAM }),
		});
		if (started.errors > 0) throw new Error(`hub start: ${started.firstError}`);
		const consoleHttp = () =>
			load({
				kind: "console",
				url: h.url,
				token: spend.host.secret,
				name: CONSOLE,
				n: trips,
				tag: crypto.randomUUID().slice(0, 8),
			});
		const consoleInProc = () =>
			probe<{ ms: number[] }>(h, { op: "console", name: CONSOLE, n: trips, tag: crypto.randomUUID().slice(0, 8) });
		await consoleHttp();
		await consoleInProc();
		const taskLoad = () =>
			load({
				kind: "task",
				url: h.url,
				token: spend.host.secret,
				n: trips,
				tool: "slow_compute",
				args: { seconds: 0.005, label: "bench" },
			});
		await taskLoad();
		steps.end("warm-up");
		console.log(
			`requests per run: ${Object.entries(counts)
				.map(([k, n]) => `${k} ${n}`)
				.join(", ")}; read in-process ${readCount}`,
		);

		const res: Record<string, LoadResult[]> = {};
		const fig: Record<string, number[]> = {};
		const put = (key: string, x: number) => {
			fig[key] ??= [];
			fig[key].push(x);
		};
		const warnings: string[] = [];
		let tasksMade = 0;
		let taskTries = 0;
		for (let round = 1; round <= rounds; round++) {
			await steps.begin();
			for (const [g, group] of groups.entries()) {
				const record = (c: RpcCell, r: LoadResult) => {
					res[c.key] ??= [];
					res[c.key]?.push(r);
					if (r.errors > 0) warnings.push(`round ${round} ${c.key}: ${r.errors} errors, ${r.firstError}`);
					console.log(
						`  round ${round} ${c.key.padEnd(20)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50ms.toFixed(3)}  p99 ${r.p99ms.toFixed(3)} ms  (${r.requests} in ${r.seconds.toFixed(2)} s)${r.eras ? `; 2025 ${r.eras.legacy.rps.toFixed(0)} req/s p50 ${r.eras.legacy.p50ms.toFixed(3)}, 2026-07-28 ${r.eras.modern.rps.toFixed(0)} req/s p50 ${r.eras.modern.p50ms.toFixed(3)}` : ""}`,
					);
				};
				const steps: Array<() => Promise<void>> = group.map(c => async () => {
					const twin = c.twin;
					if (twin === undefined) return record(c, await run(c, counts[c.key] ?? MIN_REQUESTS));
					const parts = new Map<RpcCell, LoadResult[]>([
						[c, []],
						[twin, []],
					]);
					for (let i = 0; i < SLICES; i++) {
						const pair = (i + round) % 2 === 0 ? [c, twin] : [twin, c];
						for (const x of pair) parts.get(x)?.push(await run(x, (counts[x.key] ?? MIN_REQUESTS) / SLICES));
					}
					for (const [x, rs] of parts) record(x, merged(rs));
				});
				if (g === groups.length - 1) {
					steps.push(async () => {
						const { ms } = await probe<{ ms: number[] }>(h, { op: "exec", tool: "read", args: readArgs, n: readCount });
						put("read in-process", percentile(ms, 50));
						console.log(
							`  round ${round} read in-process      p50 ${percentile(ms, 50).toFixed(3)}  p99 ${percentile(ms, 99).toFixed(3)} ms  (${ms.length})`,
						);
					});
				}
				for (const step of rotate(steps, round + g)) await step();
			}
			const consoleSides: Array<() => Promise<void>> = [
				async () => put("console http", percentile((await consoleHttp()).ms, 50)),
				async () => put("console in-process", percentile((await consoleInProc()).ms, 50)),
			];
			for (const step of rotate(consoleSides, round)) await step();
			const t = await taskLoad();
			put("task", percentile(t.task, 50));
			put("plain", percentile(t.plain, 50));
			tasksMade += t.tasks;
			taskTries += trips;
			steps.end(`r${round}`);
			console.log(
				`  round ${round} console p50 http ${fig["console http"]?.at(-1)?.toFixed(3)} in-process ${fig["console in-process"]?.at(-1)?.toFixed(3)} ms; task p50 ${fig.task?.at(-1)?.toFixed(3)} plain ${fig.plain?.at(-1)?.toFixed(3)} ms`,
			);
		}

		const rps = (key: string) => (res[key] ?? []).map(r => r.rps);
		const p50 = (key: string) => (res[key] ?? []).map(r => r.p50ms);
		const eraFig = (key: string, era: "legacy" | "modern", what: "rps" | "p50ms") =>
			(res[key] ?? []).map(r => r.eras?.[era][what] ?? Number.NaN);
		const rows: Row[] = [];
		for (const [what, label] of [
			["ping", "ping"],
			["list", "tools/list"],
		] as const) {
			for (const n of [1, 32]) {
				const key = `${what}-${n}`;
				const targeted = key === "ping-32";
				const measure = `${label}, ${n} session${n === 1 ? "" : "s"}`;
				const bridgeRps = rps(`${key} bridge`);
				const sameName = "bare, same work: secret by SHA-256, JSON-RPC checked, session bound, same catalog";
				rows.push(
					row(measure, "req/s", bridgeRps, sameName, rps(`${key} same`), "ratio", targeted ? atLeast(0.85) : undefined),
				);
				const ceiling = "context: bare ceiling (own process, constant answers, no auth, no session)";
				rows.push(row(measure, "req/s", bridgeRps, ceiling, rps(`${key} bare`), "ratio"));
				const inHostName = "context: the same bare server inside the host process";
				rows.push(row(measure, "req/s", bridgeRps, inHostName, rps(`${key} in-host`), "ratio"));
				const sameInHost = "context: bare doing the same work, inside the host process";
				rows.push(row(measure, "req/s", bridgeRps, sameInHost, rps(`${key} same in-host`), "ratio"));
				const sdkName = "context: SDK reference (official SDK, same catalog)";
				rows.push(row(measure, "req/s", bridgeRps, sdkName, rps(`${key} sdk`), "ratio"));
			}
		}
		const own = p50("call fake adapter");
		const ownName = "the bridge's own part (fake adapter)";
		rows.push(
			row(
				"tools/list, 32 clients, 2026-07-28 (no session)",
				"req/s",
				rps("list-32 modern"),
				"the same list, 2025 era, in alternating slices of the same run",
				rps("list-32 bridge"),
				"ratio",
				atLeast(0.95),
			),
			row(
				"tools/call read, 1 client, 2026-07-28: p50",
				"ms",
				eraFig("call read eras", "modern", "p50ms"),
				"the same call, 2025 era, alternating call by call",
				eraFig("call read eras", "legacy", "p50ms"),
				"diff",
				atMost(0.02, "≤ +0.02 ms"),
			),
			row(
				"tools/call, the bridge's own part (session, call table, audit, answer): p50",
				"ms",
				own,
				"bare reference in the host process, same message",
				p50("call in-host bare"),
				"diff",
				atMost(0.2, "≤ +0.2 ms"),
			),
			row(
				"tools/call greet (no-op tool), the host's part (adapter, tool cards): p50",
				"ms",
				p50("call greet"),
				ownName,
				own,
				"diff",
			),
			row(
				"tools/call read (24 lines), the host's part (adapter, tool cards, read): p50",
				"ms",
				p50("call read"),
				ownName,
				own,
				"diff",
			),
			row(
				"tools/call read over HTTP: p50",
				"ms",
				p50("call read"),
				"read called in-process (execute)",
				fig["read in-process"] ?? [],
				"diff",
			),
			row(
				"tools/call, the bridge's own part vs the SDK: p50",
				"ms",
				own,
				"SDK reference, tools/call echo",
				p50("call sdk echo"),
				"diff",
			),
			row(
				"console round trip through hub (send a line, read the answer via logs): p50",
				"ms",
				fig["console http"] ?? [],
				"the same through hub called in-process",
				fig["console in-process"] ?? [],
				"ratio",
			),
			row(
				"tools/call (5 ms tool) as a task: handle + first tasks/get, p50",
				"ms",
				fig.task ?? [],
				"the plain call, 2026-07-28, same round",
				fig.plain ?? [],
				"ratio",
				atMost(2, "≤ 2 ×"),
			),
		);

		const bodyBytes = async (t: Target) => {
			const base = {
				authorization: `Bearer ${t.token}`,
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
			};
			const sid = (await initialize(t.url, base, "bench")) ?? "";
			const r = await fetch(t.url, {
				method: "POST",
				headers: { ...base, "mcp-session-id": sid },
				body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
			});
			return (await r.arrayBuffer()).byteLength;
		};
		const mem = (pid: number) => `${statusMiB(pid, "VmRSS").toFixed(1)} / ${statusMiB(pid, "VmHWM").toFixed(1)}`;
		const notes = [
			`tools/list answer, bytes: bridge ${await bodyBytes(bridge)}, bare ${await bodyBytes(bare)}, bare doing the same work ${await bodyBytes(same)}, SDK ${await bodyBytes(sdk)} (the host's ${catalog.bytes} bytes of tools, registered through zod)`,
			`VmRSS / VmHWM MiB after the run: host ${mem(h.proc.pid)} (after boot ${hostBoot.rss.toFixed(1)} / ${hostBoot.hwm.toFixed(1)}), bare ${mem(bareProc.pid)}, SDK ${mem(sdkProc.pid)}`,
			`tasks: ${tasksMade} of ${taskTries} declaring calls became tasks`,
			`audit budget taken per step (MiB of 6, net of the refill; bench/round-tokens.ts): host ${spend.host.spent.join(", ")}; core ${spend.core.spent.join(", ")}`,
			`identity re-check after the body (contract §16): ${identityRecheckNs().toFixed(1)} ns per request, in-process`,
			`the ceilings against the SDK reference, ping ×32: own process ${(median(rps("ping-32 bare")) / median(rps("ping-32 sdk"))).toFixed(2)} ×, in the host ${(median(rps("ping-32 in-host")) / median(rps("ping-32 sdk"))).toFixed(2)} × (the most any server could reach here)`,
			...["same", "bare", "in-host"].map(
				ref =>
					`per-round ping ×32 bridge / ${ref}: ${(res["ping-32 bridge"] ?? []).map((r, i) => (r.rps / (res[`ping-32 ${ref}`]?.[i]?.rps ?? Number.NaN)).toFixed(2)).join(", ")}`,
			),
			`median p50 / p99 ms, ping ×32: bridge ${median(p50("ping-32 bridge")).toFixed(3)} / ${median((res["ping-32 bridge"] ?? []).map(r => r.p99ms)).toFixed(3)}, bare ${median(p50("ping-32 bare")).toFixed(3)} / ${median((res["ping-32 bare"] ?? []).map(r => r.p99ms)).toFixed(3)}`,
			...warnings.map(w => `warning: ${w}`),
		];
		return { rows, notes };
	} finally {
		for (const c of children) await c.stop();
		if (host) {
			await host.stop();
			host.cleanup();
		}
	}
}

if (import.meta.main) {
	const { rows, notes } = await runMcpBench();
	console.log(`\n${printTable(rows, KNOBS.rounds)}\n`);
	for (const n of [...notes, targetsLine(rows)]) console.log(n);
}
