/**
 * Where the time of two rows goes (issue 41 item 9): the plain `GET /blob` and `tools/list` at one session,
 * each served by the bridge's code and by the bare reference's, each inside the omp host and in a process of
 * its own (a 2 × 2, plus the real bridge), in rotated rounds. Beside each rate: the serving process's CPU time
 * per request or per GiB (`/proc/<pid>/stat`), and the client's, which a busy machine distorts far less than
 * wall time. Not part of `bun run bench`; alone: `bun bench/place.ts` (PLACE_ROUNDS, PLACE_MIB, PLACE_LISTS,
 * PLACE_SESSIONS, PLACE_PARTS=list,get,eras, PLACE_PROFILE, PLACE_HOST_ENV).
 */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { startChild } from "./child.ts";
import type { Workload } from "./load.ts";
import { probe, writeHostCatalog } from "./mcp.ts";
import { median, rotate } from "./table.ts";

const ROUNDS = Number(process.env.PLACE_ROUNDS ?? 5);
const MIB = Number(process.env.PLACE_MIB ?? 512);
const LISTS = Number(process.env.PLACE_LISTS ?? 3000);
const SESSIONS = (process.env.PLACE_SESSIONS ?? "1,32").split(",").map(Number);
const PARTS = process.env.PLACE_PARTS ?? "list,get";
const PROBE = join(import.meta.dir, "probe-ext.ts");
const LOAD = join(import.meta.dir, "load.ts");
const TICK_US = 1e6 / 100;

const statFields = (pid: number): string[] => {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
};
/** User + system CPU of a process so far, in µs (clock ticks of 10 ms: sum over long runs only). */
const cpuUs = (pid: number): number => {
	const f = statFields(pid);
	return (Number(f[11]) + Number(f[12])) * TICK_US;
};
/** Minor page faults of a process so far: memory the kernel had to map (and zero) on first touch. */
const faults = (pid: number): number => Number(statFields(pid)[7]);

/** One workload in a child process: its output, and the child's own CPU time (µs). */
async function loadWithCpu(w: Workload): Promise<{ out: Record<string, unknown>; clientUs: number }> {
	const proc = Bun.spawn([process.execPath, LOAD, JSON.stringify(w)], { stdout: "pipe", stderr: "pipe" });
	const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
	await proc.exited;
	if (proc.exitCode !== 0) throw new Error(`load generator failed: ${err.slice(-2000)}`);
	const u = proc.resourceUsage()?.cpuTime;
	return {
		out: JSON.parse(out) as Record<string, unknown>,
		clientUs: u ? Number(u.user) + Number(u.system) : Number.NaN,
	};
}

interface Side {
	name: string;
	pid: number;
	list: string;
	get: string;
}

// PLACE_PROFILE=<dir>: the host writes a Bun CPU profile (.cpuprofile and .md) there when it stops.
const profile = process.env.PLACE_PROFILE;
// PLACE_HOST_ENV='{"NAME":"value"}': extra environment for the host (e.g. allocator options, for an A/B).
const hostEnv: Record<string, string> = {
	...(JSON.parse(process.env.PLACE_HOST_ENV ?? "{}") as Record<string, string>),
	...(profile ? { BUN_OPTIONS: `--cpu-prof --cpu-prof-md --cpu-prof-interval=200 --cpu-prof-dir=${profile}` } : {}),
};
const host = await Host.start({ args: ["-e", PROBE], env: hostEnv });
const children: Array<{ stop(): Promise<void> }> = [];
try {
	const catalog = (await writeHostCatalog(host)).path;
	const file = join(host.home, "big.bin");
	const fd = openSync(file, "w");
	const block = new Uint8Array(1024 * 1024);
	crypto.getRandomValues(block.subarray(0, 65536));
	for (let i = 0; i < MIB; i++) writeSync(fd, block);
	closeSync(fd);
	const inHost = await probe<{ fake: number; same: number; bare: number }>(host, {
		op: "serve",
		tool: "read",
		args: { path: catalog },
		token: host.token,
		catalog,
	});
	const coreProc = await startChild("core.ts", { CORE_TOKEN: host.token, CORE_CATALOG: catalog, CORE_HOME: host.home });
	children.push(coreProc);
	const sameProc = await startChild("bare.ts", { BARE_TOKEN: host.token, BARE_CATALOG: catalog });
	children.push(sameProc);
	const at = (port: number) => `http://127.0.0.1:${port}/`;
	const q = `path=${encodeURIComponent(file)}`;
	const hp = host.proc.pid;
	const sides: Side[] = [
		{ name: "bridge (host)", pid: hp, list: host.url, get: `${host.url}blob?${q}` },
		{ name: "bridge core (host)", pid: hp, list: at(inHost.fake), get: `${at(inHost.fake)}blob?${q}` },
		{ name: "bare (host)", pid: hp, list: at(inHost.same), get: `${at(inHost.same)}down?${q}&digest=none` },
		{ name: "bridge core (own)", pid: coreProc.pid, list: coreProc.url, get: `${coreProc.url}blob?${q}` },
		{ name: "bare (own)", pid: sameProc.pid, list: sameProc.url, get: `${sameProc.url}down?${q}&digest=none` },
	];
	const auth = { authorization: `Bearer ${host.token}` };
	const fig: Record<string, number[]> = {};
	const put = (k: string, x: number) => {
		fig[k] ??= [];
		fig[k].push(x);
	};
	const rpc = (s: Side, n: number, sessions = 1): Workload => ({
		kind: "rpc",
		url: s.list,
		token: host.token,
		sessions,
		perSession: Math.ceil(n / sessions),
		messages: [{ method: "tools/list" }],
	});
	for (const s of sides) await loadWithCpu(rpc(s, 500));
	for (const s of sides) await loadWithCpu({ kind: "download", url: s.get, headers: auth });
	console.log(
		`place: ${ROUNDS} rounds, ${LISTS} lists, ${MIB} MiB; load ${loadavg()
			.map(x => x.toFixed(2))
			.join(" ")}`,
	);
	for (let r = 0; r < ROUNDS; r++) {
		for (const n of PARTS.includes("list") ? SESSIONS : [])
			for (const s of rotate(sides, r)) {
				const [c0, f0] = [cpuUs(s.pid), faults(s.pid)];
				const { out, clientUs } = await loadWithCpu(rpc(s, LISTS, n));
				const serverUs = (cpuUs(s.pid) - c0) / LISTS;
				const perReq = (faults(s.pid) - f0) / LISTS;
				put(`list×${n} server faults ${s.name}`, perReq);
				put(`list×${n} rps ${s.name}`, out.rps as number);
				put(`list×${n} server µs ${s.name}`, serverUs);
				put(`list×${n} client µs ${s.name}`, clientUs / LISTS);
				console.log(
					`  round ${r + 1} list×${n} ${s.name.padEnd(20)} ${(out.rps as number).toFixed(0).padStart(6)} req/s  server ${serverUs.toFixed(1)} µs/req ${perReq.toFixed(1)} faults/req  client ${(clientUs / LISTS).toFixed(1)} µs/req`,
				);
			}
		// The two eras' tools/list ×32 against the real bridge, alternating slices as bench/mcp.ts does.
		for (const modern of PARTS.includes("eras") ? rotate([false, true, true, false], r) : []) {
			const era = modern ? "2026-07-28" : "2025";
			const c0 = cpuUs(hp);
			const { out } = await loadWithCpu({ ...rpc(sides[0] as Side, LISTS, 32), ...(modern ? { modern: true } : {}) });
			const serverUs = (cpuUs(hp) - c0) / LISTS;
			put(`list×32 ${era} rps`, out.rps as number);
			put(`list×32 ${era} server µs`, serverUs);
			console.log(
				`  round ${r + 1} list×32 ${era.padEnd(10)} ${(out.rps as number).toFixed(0)} req/s  host ${serverUs.toFixed(1)} µs/req`,
			);
		}
		for (const s of PARTS.includes("get") ? rotate(sides, r) : []) {
			Bun.spawnSync(["sync"]);
			const c0 = cpuUs(s.pid);
			const { out, clientUs } = await loadWithCpu({ kind: "download", url: s.get, headers: auth });
			const gib = (out.bytes as number) / 2 ** 30;
			const mbps = (out.bytes as number) / 1e6 / ((out.ms as number) / 1000);
			const serverMs = (cpuUs(s.pid) - c0) / 1000 / gib;
			put(`get MB/s ${s.name}`, mbps);
			put(`get server ms ${s.name}`, serverMs);
			put(`get client ms ${s.name}`, clientUs / 1000 / gib);
			console.log(
				`  round ${r + 1} GET  ${s.name.padEnd(20)} ${mbps.toFixed(0).padStart(6)} MB/s  server ${serverMs.toFixed(0)} ms/GiB  client ${(clientUs / 1000 / gib).toFixed(0)} ms/GiB (status ${out.status})`,
			);
		}
	}
	console.log(
		`\nmedians of ${ROUNDS} rounds; load ${loadavg()
			.map(x => x.toFixed(2))
			.join(" ")}`,
	);
	for (const [k, xs] of Object.entries(fig))
		console.log(`${k.padEnd(40)} ${median(xs).toFixed(1)}  (${xs.map(x => x.toFixed(1)).join(", ")})`);
} finally {
	for (const c of children) await c.stop();
	await host.stop();
	host.cleanup();
}
