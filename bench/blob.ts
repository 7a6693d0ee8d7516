/**
 * `/blob` throughput and memory (issue 5, point 6). In one run: 1 GiB up and down through the bridge
 * inside a real host, the same through a bare Bun server with no logic (the ceiling of HTTP here),
 * and a plain local file copy for context. Prints MB/s (10^6 bytes/s), the bridge/bare ratios and the
 * host's VmHWM growth. Also, in the same rounds: `PUT` (atomic replace) against `POST`, and `GET` with
 * `Want-Repr-Digest` against a bare server that hashes the file while it sends it (right after the PUT, the
 * digest is the one the upload computed; a cold row hashes a fresh copy first). Targets: ≥ 0.85 × bare
 * both ways, PUT ≥ 0.9 × POST, GET with digest ≥ 0.85 × the hashing bare server, ≤ 64 MiB growth. Env: BLOB_BENCH_MIB
 * (size, default 1024), BLOB_BENCH_ROUNDS (default 3; medians are reported). Returns the figures
 * so that `bun run bench` can put them in its one combined table.
 */
import { createHash } from "node:crypto";
import {
	closeSync,
	copyFileSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { type Child, startChild } from "./child.ts";

const MIB = 1024 * 1024;
const SIZE_MIB = Number(process.env.BLOB_BENCH_MIB ?? 1024);
const ROUNDS = Number(process.env.BLOB_BENCH_ROUNDS ?? 3);
const SIZE = SIZE_MIB * MIB;
const TARGET_RATIO = 0.85;
const TARGET_PUT_VS_POST = 0.9;
const TARGET_GROWTH_MIB = 64;
const SETTLE_MS = 3000;

const mbps = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);
const statusKiB = (pid: number, field: "VmHWM" | "VmRSS"): number => {
	const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
	return Number(m[1]);
};
const vmHwmKiB = (pid: number): number => statusKiB(pid, "VmHWM");
const rssKiB = (pid: number): number => statusKiB(pid, "VmRSS");

/** Resets the peak to the current RSS (Linux `clear_refs` 5), so boot-time peaks cannot hide growth. */
function resetPeak(pid: number): boolean {
	try {
		writeFileSync(`/proc/${pid}/clear_refs`, "5");
		return true;
	} catch {
		return false;
	}
}

async function sha256File(path: string): Promise<string> {
	const h = createHash("sha256");
	for await (const chunk of Bun.file(path).stream()) h.update(chunk);
	return h.digest("hex");
}

function makeSource(path: string): void {
	const fd = openSync(path, "w");
	const block = new Uint8Array(MIB);
	try {
		for (let i = 0; i < SIZE_MIB; i++) {
			for (let off = 0; off < MIB; off += 65536) crypto.getRandomValues(block.subarray(off, off + 65536));
			writeSync(fd, block);
		}
	} finally {
		closeSync(fd);
	}
}

async function timeUpload(url: string, src: string, headers: Record<string, string>, method = "POST"): Promise<number> {
	const t0 = performance.now();
	const res = await fetch(url, { method, body: Bun.file(src), headers });
	const text = await res.text();
	const ms = performance.now() - t0;
	if (res.status !== 200) throw new Error(`upload to ${url} -> ${res.status} ${text}`);
	return ms;
}

async function timeDownload(url: string, headers: Record<string, string>, reprDigest?: string): Promise<number> {
	const t0 = performance.now();
	const res = await fetch(url, { headers });
	let n = 0;
	for await (const chunk of res.body ?? []) n += chunk.byteLength;
	const ms = performance.now() - t0;
	if (res.status !== 200 || n !== SIZE) throw new Error(`download from ${url} -> ${res.status}, ${n} bytes`);
	if (reprDigest !== undefined && res.headers.get("repr-digest") !== reprDigest) {
		throw new Error(`download from ${url}: Repr-Digest ${res.headers.get("repr-digest")}, expected ${reprDigest}`);
	}
	return ms;
}

interface Times {
	up: number;
	down: number;
}

/** What `bun run bench` puts into the one combined table (MB/s, medians of the rounds; MiB). */
export interface BlobResult {
	sizeMiB: number;
	rounds: number;
	bridge: Times;
	/** `PUT` up, `GET` with `Want-Repr-Digest` down. */
	bridgePut: Times;
	/** Down only: a bare server hashing the file while it streams it. */
	bareHash: number;
	/** Down only: `GET` with `Want-Repr-Digest` of a file the bridge has never hashed (a fresh copy). */
	bridgeCold: number;
	bareSync: Times;
	bareBunWrite: Times;
	copy: number;
	hwmGrowthMiB: number;
	rssGrowthMiB: number;
}

const median = (xs: number[]): number => {
	const s = [...xs].sort((a, b) => a - b);
	const mid = Math.floor(s.length / 2);
	return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

export async function runBlobBench(): Promise<BlobResult> {
	const dir = mkdtempSync(join(tmpdir(), "blob-bench-"));
	const src = join(dir, "source.bin");
	let host: Host | undefined;
	let bare: Child | undefined;
	try {
		console.log(`blob bench: ${SIZE_MIB} MiB, ${ROUNDS} interleaved rounds, medians`);
		makeSource(src);
		const srcSha = await sha256File(src);
		const srcRepr = `sha-256=:${Buffer.from(srcSha, "hex").toString("base64")}:`;
		const copyRuns: number[] = [];
		for (let r = 0; r < ROUNDS; r++) {
			const t0 = performance.now();
			copyFileSync(src, join(dir, "copy.bin"));
			copyRuns.push(performance.now() - t0);
			rmSync(join(dir, "copy.bin"));
		}
		const copyMs = median(copyRuns);
		host = await Host.start();
		bare = await startChild("blob-bare-server.ts");
		const auth = { authorization: `Bearer ${host.token}` };
		const pid = host.proc.pid;
		// Boot work and first-request one-offs (JIT, route setup) are not per-GiB growth: settle, warm up, then measure.
		await Bun.sleep(SETTLE_MS);
		const hwmBoot = vmHwmKiB(pid);
		const warm = `${host.url}blob?path=${encodeURIComponent(join(dir, "warm.bin"))}`;
		await (await fetch(warm, { method: "POST", body: new Uint8Array(MIB), headers: auth })).text();
		await (await fetch(warm, { headers: auth })).arrayBuffer();
		const isReset = resetPeak(pid);
		const hwmBefore = vmHwmKiB(pid);
		const rssBefore = rssKiB(pid);
		let rssPeak = rssBefore;
		let hwmAfterFirstUpload = 0;
		const loadBefore = loadavg()[0] ?? 0;
		const runs: Record<
			"bridge" | "bridge-put" | "bridge-cold" | "bare-sync" | "bare-bunwrite" | "bare-hash",
			{ up: number[]; down: number[] }
		> = {
			bridge: { up: [], down: [] },
			"bridge-put": { up: [], down: [] },
			"bridge-cold": { up: [], down: [] },
			"bare-sync": { up: [], down: [] },
			"bare-bunwrite": { up: [], down: [] },
			"bare-hash": { up: [], down: [] },
		};
		for (let r = 0; r < ROUNDS; r++) {
			// Interleaved so that load from elsewhere on the machine hits every contender alike.
			for (const who of Object.keys(runs) as Array<keyof typeof runs>) {
				if (who === "bridge-cold") {
					const cold = join(dir, `cold-${r}.bin`);
					copyFileSync(src, cold);
					const url = `${host.url}blob?path=${encodeURIComponent(cold)}`;
					const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(pid))), 5);
					runs[who].down.push(await timeDownload(url, { ...auth, "want-repr-digest": "sha-256=1" }, srcRepr));
					clearInterval(sampler);
					rmSync(cold);
					continue;
				}
				if (who === "bare-hash") {
					const hashing = `http://127.0.0.1:${bare.port}/hashsend?path=${encodeURIComponent(src)}`;
					runs[who].down.push(await timeDownload(hashing, {}));
					continue;
				}
				const dst = join(dir, `${who}-${r}.bin`);
				const q = `path=${encodeURIComponent(dst)}`;
				const inBridge = who === "bridge" || who === "bridge-put";
				const base = inBridge
					? `${host.url}blob?${q}`
					: `http://127.0.0.1:${bare.port}/${who === "bare-sync" ? "sync" : "bunwrite"}?${q}`;
				const headers = inBridge ? auth : {};
				// VmHWM is updated lazily by the kernel; sampling VmRSS as well catches peaks it may miss.
				const sampler = inBridge ? setInterval(() => (rssPeak = Math.max(rssPeak, rssKiB(pid))), 5) : null;
				const up = await timeUpload(base, src, headers, who === "bridge-put" ? "PUT" : "POST");
				if (who === "bridge" && r === 0) hwmAfterFirstUpload = vmHwmKiB(pid);
				if (statSync(dst).size !== SIZE || (r === 0 && (await sha256File(dst)) !== srcSha)) {
					throw new Error(`${who}: uploaded file differs from the source`);
				}
				const down =
					who === "bridge-put"
						? await timeDownload(base, { ...headers, "want-repr-digest": "sha-256=1" }, srcRepr)
						: await timeDownload(base, headers);
				if (sampler) clearInterval(sampler);
				runs[who].up.push(up);
				runs[who].down.push(down);
				rmSync(dst);
			}
		}
		const hwmAfter = vmHwmKiB(pid);
		const loadAfter = loadavg()[0] ?? 0;
		const best = Object.fromEntries(
			Object.entries(runs).map(([who, t]) => [who, { up: median(t.up), down: median(t.down) }]),
		) as Record<keyof typeof runs, Times>;
		const ceiling: Times = {
			up: Math.min(best["bare-sync"].up, best["bare-bunwrite"].up),
			down: Math.min(best["bare-sync"].down, best["bare-bunwrite"].down),
		};
		const row = (name: string, up: string, down: string) =>
			`| ${name.padEnd(34)} | ${up.padStart(9)} | ${down.padStart(9)} |`;
		const fmt = (ms: number) => (Number.isFinite(ms) ? mbps(SIZE, ms).toFixed(0) : "-");
		const ratio = (ms: number, ceilingMs: number) => ceilingMs / ms;
		const upRatio = ratio(best.bridge.up, ceiling.up);
		const downRatio = ratio(best.bridge.down, ceiling.down);
		const growthMiB = (hwmAfter - hwmBefore) / 1024;
		const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;
		console.log("");
		console.log(row(`path (MB/s, median of ${ROUNDS})`, "upload", "download"));
		console.log(`|${"-".repeat(36)}|${"-".repeat(11)}|${"-".repeat(11)}|`);
		console.log(row("bridge /blob (in the omp host)", fmt(best.bridge.up), fmt(best.bridge.down)));
		console.log(row("bridge PUT; GET + Want-Repr-Digest", fmt(best["bridge-put"].up), fmt(best["bridge-put"].down)));
		console.log(row("bridge GET + Want-Repr-Digest, cold", "-", fmt(best["bridge-cold"].down)));
		console.log(row("bare Bun server, writeSync per chunk", fmt(best["bare-sync"].up), fmt(best["bare-sync"].down)));
		console.log(row("bare Bun server, Bun.write(req)", fmt(best["bare-bunwrite"].up), fmt(best["bare-bunwrite"].down)));
		console.log(row("bare Bun server, hashing as it sends", "-", fmt(best["bare-hash"].down)));
		console.log(row("local file copy (copyFileSync)", fmt(copyMs), "-"));
		for (const [name, key] of [
			["bridge / bare writeSync", "bare-sync"],
			["bridge / bare Bun.write", "bare-bunwrite"],
		] as const) {
			console.log(
				row(name, ratio(best.bridge.up, best[key].up).toFixed(2), ratio(best.bridge.down, best[key].down).toFixed(2)),
			);
		}
		console.log(row("bridge / best bare", upRatio.toFixed(2), downRatio.toFixed(2)));
		const putRatio = ratio(best["bridge-put"].up, best.bridge.up);
		const digestRatio = ratio(best["bridge-put"].down, best["bare-hash"].down);
		const coldRatio = ratio(best["bridge-cold"].down, best["bare-hash"].down);
		console.log(row("PUT / POST; GET+digest / bare hashing", putRatio.toFixed(2), digestRatio.toFixed(2)));
		console.log(row("cold GET+digest / bare hashing", "-", coldRatio.toFixed(2)));
		console.log("");
		console.log(
			`host VmHWM: ${mib(hwmBoot)} after boot; ${isReset ? "reset to the current RSS" : "not resettable, kept"} after a 1 MiB warm-up: ${mib(hwmBefore)}; ${mib(hwmAfterFirstUpload)} after the first ${SIZE_MIB} MiB upload (+${mib(hwmAfterFirstUpload - hwmBefore)}); ${mib(hwmAfter)} after all ${ROUNDS} round(s) up and down (+${mib(hwmAfter - hwmBefore)})`,
		);
		console.log(
			`host VmRSS sampled every 5 ms during the bridge transfers: ${mib(rssBefore)} before, peak ${mib(rssPeak)} (+${mib(rssPeak - rssBefore)})`,
		);
		console.log(
			`1-minute load average: ${loadBefore.toFixed(2)} before the transfers, ${loadAfter.toFixed(2)} after (2 cores)`,
		);
		const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
		console.log(
			`targets: PUT ≥ ${TARGET_PUT_VS_POST} × POST ${verdict(putRatio >= TARGET_PUT_VS_POST)}, GET with Want-Repr-Digest ≥ ${TARGET_RATIO} × the hashing bare server ${verdict(digestRatio >= TARGET_RATIO)} (after an upload; cold ${coldRatio.toFixed(2)} ×), upload ≥ ${TARGET_RATIO} × bare ${verdict(upRatio >= TARGET_RATIO)}, download ≥ ${TARGET_RATIO} × bare ${verdict(downRatio >= TARGET_RATIO)}, VmHWM growth ≤ ${TARGET_GROWTH_MIB} MiB ${verdict(growthMiB <= TARGET_GROWTH_MIB)}, sampled RSS growth ≤ ${TARGET_GROWTH_MIB} MiB ${verdict((rssPeak - rssBefore) / 1024 <= TARGET_GROWTH_MIB)}`,
		);
		return {
			sizeMiB: SIZE_MIB,
			rounds: ROUNDS,
			bridge: { up: mbps(SIZE, best.bridge.up), down: mbps(SIZE, best.bridge.down) },
			bridgePut: { up: mbps(SIZE, best["bridge-put"].up), down: mbps(SIZE, best["bridge-put"].down) },
			bareHash: mbps(SIZE, best["bare-hash"].down),
			bridgeCold: mbps(SIZE, best["bridge-cold"].down),
			bareSync: { up: mbps(SIZE, best["bare-sync"].up), down: mbps(SIZE, best["bare-sync"].down) },
			bareBunWrite: { up: mbps(SIZE, best["bare-bunwrite"].up), down: mbps(SIZE, best["bare-bunwrite"].down) },
			copy: mbps(SIZE, copyMs),
			hwmGrowthMiB: growthMiB,
			rssGrowthMiB: (rssPeak - rssBefore) / 1024,
		};
	} finally {
		await bare?.stop();
		if (host) {
			await host.stop();
			host.cleanup();
		}
		rmSync(dir, { recursive: true, force: true });
	}
}

if (import.meta.main) await runBlobBench();
