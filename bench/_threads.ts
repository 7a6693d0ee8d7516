import { closeSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { startChild } from "./child.ts";
import { load } from "./load.ts";

const host = await Host.start({});
const bare = await startChild("bare.ts");
const threads = (pid: number) =>
	Object.fromEntries(
		readdirSync(`/proc/${pid}/task`).map(t => {
			const s = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
			const name = s.slice(s.indexOf("(") + 1, s.lastIndexOf(")"));
			const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
			const [run, wait] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ").map(Number);
			const st = readFileSync(`/proc/${pid}/task/${t}/status`, "utf8");
			return [
				`${t}:${name}`,
				{
					cpu: (Number(f[11]) + Number(f[12])) * 10,
					run: (run ?? 0) / 1e6,
					wait: (wait ?? 0) / 1e6,
					vcs: Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(st)?.[1]),
					ncs: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(st)?.[1]),
				},
			];
		}),
	);
try {
	const file = join(host.home, "big.bin");
	const fd = openSync(file, "w");
	const b = new Uint8Array(1 << 20);
	for (let i = 0; i < 512; i++) writeSync(fd, b);
	closeSync(fd);
	for (const [name, pid, url] of [
		["bridge", host.proc.pid, `${host.url}blob?path=${encodeURIComponent(file)}`],
		["bare", bare.pid, `${bare.url}down?path=${encodeURIComponent(file)}&digest=none`],
	] as const) {
		for (let r = 0; r < 6; r++) {
			const t0 = threads(pid);
			const dst = join(host.home, `up-${r}.bin`);
			const upUrl =
				name === "bridge"
					? `${host.url}blob?path=${encodeURIComponent(dst)}`
					: `${bare.url}up?path=${encodeURIComponent(dst)}&how=bunwrite-hash`;
			if (r % 2 === 1)
				await load({
					kind: "upload",
					url: upUrl,
					file,
					method: "PUT",
					headers: { authorization: `Bearer ${host.token}` },
				});
			Bun.spawnSync(["sync"]);
			const t00 = threads(pid);
			Object.assign(t0, t00);
			const t = await load({ kind: "download", url, headers: { authorization: `Bearer ${host.token}` } });
			require("node:fs").rmSync(dst, { force: true });
			const t1 = threads(pid);
			const busy = Object.entries(t1)
				.map(([k, v]) => {
					const a = t0[k] ?? { cpu: 0, run: 0, wait: 0, vcs: 0, ncs: 0 };
					return [k, v.run - a.run, v.wait - a.wait, v.vcs - a.vcs, v.ncs - a.ncs] as const;
				})
				.filter(x => x[1] > 1 || x[3] > 5);
			console.log(
				`${name}${r % 2 === 1 ? " after PUT" : ""} ${(t.bytes / 1e6 / (t.ms / 1000)).toFixed(0)} MB/s in ${t.ms.toFixed(0)} ms: ${busy.map(([k, run, wait, v, n]) => `${k} run ${run.toFixed(0)} ms wait ${wait.toFixed(0)} ms cs ${v}/${n}`).join("; ")}`,
			);
		}
	}
} finally {
	await bare.stop();
	await host.stop();
	host.cleanup();
}
