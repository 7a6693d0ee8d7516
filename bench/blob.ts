/**
 * `/blob` rows of `bun run bench`: every bridge transfer beside a bare server (bench/bare.ts) doing the same
 * work, in the same interleaved rounds. POST (the body to a file, hashed) against a bare server that also
 * hashes; PUT against a bare "stage, hash, fsync, rename"; GET against the bare send; GET with
 * `Want-Repr-Digest` right after the PUT (the digest is known) against a bare server sending a digest it
 * knows; the same of a file never hashed (cold) against a bare server that hashes first, then sends with the
 * header. Context rows keep the unhashed bare servers. Also an upload and a download at once, by two
 * tokens, against each alone, and the host's memory growth. Alone: `bun bench/blob.ts`.
 */
import {
	closeSync,
	copyFileSync,
	mkdtempSync,
	openSync,
	readdirSync,
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
import { load, type Transfer } from "./load.ts";
import { atLeast, atMost, KNOBS, median, printTable, type Row, rotate, row, targetsLine } from "./table.ts";

const MIB = 1024 * 1024;
const SETTLE_MS = 3000;
/** Warm-up transfers: past FOLLOW_MIN_BYTES (8 MiB), where the bridge starts hashing on a worker. */
const WARM_MIB = 16;
const SECOND = `second${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");

/** Bound on one `sync`: a disk that takes longer is noted in the log, not waited on for ever. */
const SYNC_TIMEOUT_MS = 60_000;

/** Writes every dirty page out, so no transfer pays for the writeback of the one before it (or of a copy). */
function settleDisk(): void {
	const r = Bun.spawnSync(["sync"], { timeout: SYNC_TIMEOUT_MS });
	if (r.exitCode !== 0) console.log(`  sync did not finish within ${SYNC_TIMEOUT_MS / 1000} s; measuring anyway`);
}

const statusKiB = (pid: number, field: "VmHWM" | "VmRSS"): number => {
	const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
	return Number(m[1]);
};

/** CPU ms so far of a process's main thread and of all its other threads (each thread's stat under /proc). */
function threadCpuMs(pid: number): { main: number; others: number } {
	const out = { main: 0, others: 0 };
	for (const tid of readdirSync(`/proc/${pid}/task`)) {
		try {
			const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
			const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			out[Number(tid) === pid ? "main" : "others"] += (Number(f[11]) + Number(f[12])) * 10;
		} catch {
			// The thread ended meanwhile.
		}
	}
	return out;
}

/** Resets the peak to the current RSS (Linux `clear_refs` 5), so boot-time peaks cannot hide growth. */
function resetPeak(pid: number): boolean {
	try {
		writeFileSync(`/proc/${pid}/clear_refs`, "5");
		return true;
	} catch {
		return false;
	}
}

function makeSource(path: string, mib: number): void {
	const fd = openSync(path, "w");
	const block = new Uint8Array(MIB);
	try {
		for (let i = 0; i < mib; i++) {
			for (let off = 0; off < MIB; off += 65536) crypto.getRandomValues(block.subarray(off, off + 65536));
			writeSync(fd, block);
		}
	} finally {
		closeSync(fd);
	}
}

export interface BlobBench {
	rows: Row[];
	notes: string[];
}

export async function runBlobBench(rounds = KNOBS.rounds, mib = KNOBS.blobMiB): Promise<BlobBench> {
	const size = mib * MIB;
	const dir = mkdtempSync(join(tmpdir(), "blob-bench-"));
	const src = join(dir, "source.bin");
	let host: Host | undefined;
	let bare: Child | undefined;
	try {
		console.log(`blob bench: ${mib} MiB per transfer, ${rounds} interleaved rounds`);
		makeSource(src, mib);
		const hasher = new Bun.CryptoHasher("sha256");
		for await (const chunk of Bun.file(src).stream()) hasher.update(chunk);
		const srcHex = hasher.digest("hex");
		const srcRepr = `sha-256=:${Buffer.from(srcHex, "hex").toString("base64")}:`;
		const copyMs: number[] = [];
		for (let r = 0; r < rounds; r++) {
			const t0 = performance.now();
			copyFileSync(src, join(dir, "copy.bin"));
			copyMs.push(performance.now() - t0);
			rmSync(join(dir, "copy.bin"));
		}
		host = await Host.start({ config: { tokens: [{ name: "second", token: SECOND }] } });
		bare = await startChild("bare.ts");
		const h = host;
		const b = bare;
		const pid = h.proc.pid;
		const owner = { authorization: `Bearer ${h.token}` };
		const second = { authorization: `Bearer ${SECOND}` };
		const wantDigest = { "want-repr-digest": "sha-256=1" };
		const bridgeUrl = (path: string) => `${h.url}blob?path=${encodeURIComponent(path)}`;
		const bareUrl = (route: "up" | "down", path: string, q: string) =>
			`http://127.0.0.1:${b.port}/${route}?path=${encodeURIComponent(path)}&${q}`;
		const mbps = (t: Transfer) => size / 1e6 / (t.ms / 1000);

		/** One transfer, checked: status, size, and the digest where the side computes one. */
		const up = async (url: string, method: "POST" | "PUT", headers: Record<string, string>, dst: string) => {
			const t = await load({ kind: "upload", url, file: src, method, headers });
			const hex = (JSON.parse(t.answer || "{}") as { sha256?: string }).sha256;
			if (t.status !== 200 || statSync(dst).size !== size || (hex !== undefined && hex !== "" && hex !== srcHex))
				throw new Error(`${method} ${url}: ${t.status} ${t.answer.slice(0, 300)}`);
			return mbps(t);
		};
		const down = async (url: string, headers: Record<string, string>, digest?: string) => {
			const t = await load({ kind: "download", url, headers });
			if (t.status !== 200 || t.bytes !== size || (digest !== undefined && t.answer !== digest))
				throw new Error(`GET ${url}: ${t.status}, ${t.bytes} bytes, Repr-Digest '${t.answer}'`);
			return mbps(t);
		};

		// Boot work and first-request one-offs (JIT, route setup) are not per-GiB growth: settle, warm up, then measure.
		await Bun.sleep(SETTLE_MS);
		const hwmBoot = statusKiB(pid, "VmHWM");
		// Every path once, past the size at which the bridge hashes on a worker: no measured transfer pays a first start.
		const warm = join(dir, "warm.bin");
		const warmBody = new Uint8Array(WARM_MIB * MIB);
		const ups: Array<["POST" | "PUT", string, Record<string, string>]> = [
			["POST", bridgeUrl(warm), owner],
			["PUT", bridgeUrl(warm), owner],
			...(["hash", "bunwrite-hash", "write", "bunwrite"] as const).map(
				how => ["POST", bareUrl("up", warm, `how=${how}`), {}] as ["POST", string, Record<string, string>],
			),
			["PUT", bareUrl("up", warm, "how=bunwrite-hash"), {}],
			["PUT", bareUrl("up", warm, "how=hash"), {}],
		];
		for (const [method, url, headers] of ups) {
			if (method === "POST") rmSync(warm, { force: true });
			const res = await fetch(url, { method, body: warmBody, headers });
			if (res.status !== 200) throw new Error(`warm-up ${method} ${url}: ${res.status} ${await res.text()}`);
			await res.arrayBuffer();
		}
		const downs: Array<[string, Record<string, string>]> = [
			[bridgeUrl(warm), owner],
			[bridgeUrl(warm), { ...owner, ...wantDigest }],
			...["none", "cold", "known", "stream"].map(
				d => [bareUrl("down", warm, `digest=${d}`), {}] as [string, Record<string, string>],
			),
		];
		for (const [url, headers] of downs) await (await fetch(url, { headers })).arrayBuffer();
		rmSync(warm, { force: true });
		const isReset = resetPeak(pid);
		const hwmBefore = statusKiB(pid, "VmHWM");
		const rssBefore = statusKiB(pid, "VmRSS");
		let rssPeak = rssBefore;
		const loadBefore = loadavg()[0] ?? 0;
		const fig: Record<string, number[]> = {};
		let said: string[] = [];
		let warming = true;
		const put = (key: string, x: number) => {
			said.push(`${key} ${x.toFixed(0)}`);
			if (warming) return;
			fig[key] ??= [];
			fig[key].push(x);
		};
		const threads: Record<string, Array<[number, number]>> = {};
		/** A plain GET, with the serving process's CPU by thread kept (where the GET row's gap goes). */
		const plainGet = async (key: string, pid: number, url: string, headers: Record<string, string>) => {
			const before = threadCpuMs(pid);
			put(key, await down(url, headers));
			const after = threadCpuMs(pid);
			if (warming) return;
			threads[key] ??= [];
			threads[key].push([after.main - before.main, after.others - before.others]);
		};
		/** Runs `fn` while sampling the host's RSS every 5 ms (VmHWM is updated lazily and can miss a short peak). */
		const sampled = async <T>(fn: () => Promise<T>): Promise<T> => {
			const timer = setInterval(() => (rssPeak = Math.max(rssPeak, statusKiB(pid, "VmRSS"))), 5);
			try {
				return await fn();
			} finally {
				clearInterval(timer);
			}
		};

		// Round 0 is run and not counted: the first full-size transfers on this machine ran at a third of the
		// speed of the later ones, whichever side went first (runs 11 and 12). Its memory growth still counts.
		for (let r = 0; r <= rounds; r++) {
			warming = r === 0;
			const cold = join(dir, `cold-${r}.bin`);
			copyFileSync(src, cold);
			const f = (name: string) => join(dir, `${name}-${r}.bin`);
			const steps: Array<[string, () => Promise<void>]> = [
				[
					"bridge POST",
					() => sampled(async () => put("bridge-post", await up(bridgeUrl(f("bp")), "POST", owner, f("bp")))),
				],
				[
					"bridge PUT, then GET + Want-Repr-Digest",
					() =>
						sampled(async () => {
							put("bridge-put", await up(bridgeUrl(f("bu")), "PUT", owner, f("bu")));
							put("bridge-warm", await down(bridgeUrl(f("bu")), { ...owner, ...wantDigest }, srcRepr));
						}),
				],
				["bridge GET", () => sampled(() => plainGet("bridge-get", pid, bridgeUrl(src), owner))],
				[
					"bridge GET + Want-Repr-Digest, cold",
					() =>
						sampled(async () => put("bridge-cold", await down(bridgeUrl(cold), { ...owner, ...wantDigest }, srcRepr))),
				],
				[
					"bridge POST and GET at once, two tokens",
					() =>
						sampled(async () => {
							const [u, d] = await Promise.all([
								up(bridgeUrl(f("bc")), "POST", owner, f("bc")),
								down(bridgeUrl(src), second),
							]);
							put("both-up", u);
							put("both-down", d);
						}),
				],
				...(["hash", "bunwrite-hash", "write", "bunwrite"] as const).map(
					how =>
						[
							`bare POST ${how}`,
							async () =>
								put(`bare-post-${how}`, await up(bareUrl("up", f(`p${how}`), `how=${how}`), "POST", {}, f(`p${how}`))),
						] as [string, () => Promise<void>],
				),
				[
					"bare PUT hash, then GET with the known digest",
					async () => {
						put("bare-put-hash", await up(bareUrl("up", f("uh"), "how=hash"), "PUT", {}, f("uh")));
						put("bare-known", await down(bareUrl("down", f("uh"), "digest=known"), {}, srcRepr));
					},
				],
				[
					"bare PUT bunwrite-hash",
					async () =>
						put("bare-put-bunwrite-hash", await up(bareUrl("up", f("ub"), "how=bunwrite-hash"), "PUT", {}, f("ub"))),
				],
				["bare GET", () => plainGet("bare-get", b.pid, bareUrl("down", src, "digest=none"), {})],
				[
					"bare GET, hash then send",
					async () => put("bare-cold", await down(bareUrl("down", cold, "digest=cold"), {}, srcRepr)),
				],
				[
					"bare GET, hash while sending",
					async () => put("bare-stream", await down(bareUrl("down", src, "digest=stream"), {})),
				],
			];
			for (const [name, step] of rotate(steps, r * 5)) {
				settleDisk();
				await step();
				for (const file of ["bp", "bu", "bc", "phash", "pbunwrite-hash", "pwrite", "pbunwrite", "uh", "ub"])
					rmSync(f(file), { force: true });
				console.log(`  round ${warming ? "0 (not counted)" : r} ${name}: ${said.join(", ")} MB/s`);
				said = [];
			}
			rmSync(cold, { force: true });
		}
		const hwmAfter = statusKiB(pid, "VmHWM");
		const loadAfter = loadavg()[0] ?? 0;
		// The faster way over the run (by median), not the faster per round: the larger of two noisy figures
		// each round would favour the reference by the noise alone.
		const best = (a: string, c: string) => {
			const [x, y] = [fig[a] ?? [], fig[c] ?? []];
			return median(y) > median(x) ? y : x;
		};
		const mbRow = (measure: string, bridge: string, refName: string, ref: number[], target?: Row["target"]) =>
			row(measure, "MB/s", fig[bridge] ?? [], refName, ref, "ratio", target);
		const anyHash = "the faster over the run of: hash each chunk as written; pipe, then hash";
		const budget = atMost(64, "≤ 64 MiB");
		const rows: Row[] = [
			mbRow(
				`/blob POST ${mib} MiB (stored + SHA-256)`,
				"bridge-post",
				`bare: store + SHA-256 (${anyHash})`,
				best("bare-post-hash", "bare-post-bunwrite-hash"),
				atLeast(0.9),
			),
			mbRow(
				`/blob PUT ${mib} MiB (staged, SHA-256, fsync, rename)`,
				"bridge-put",
				`bare: stage, SHA-256, fsync, rename (${anyHash})`,
				best("bare-put-hash", "bare-put-bunwrite-hash"),
				atLeast(0.9),
			),
			mbRow(`/blob GET ${mib} MiB`, "bridge-get", "bare: send the file", fig["bare-get"] ?? [], atLeast(0.85)),
			mbRow(
				"/blob GET + Want-Repr-Digest after the PUT (warm)",
				"bridge-warm",
				"bare: send with a digest it knows",
				fig["bare-known"] ?? [],
				atLeast(0.85),
			),
			mbRow(
				"/blob GET + Want-Repr-Digest, file never hashed (cold)",
				"bridge-cold",
				"bare: hash, then send with Repr-Digest",
				fig["bare-cold"] ?? [],
				atLeast(0.85),
			),
			mbRow(
				"context: /blob POST vs an unhashed bare server",
				"bridge-post",
				"bare, no hash: writeSync per chunk",
				fig["bare-post-write"] ?? [],
			),
			mbRow(
				"context: /blob POST vs an unhashed bare server",
				"bridge-post",
				"bare, no hash: Bun.write(req)",
				fig["bare-post-bunwrite"] ?? [],
			),
			mbRow(
				"context: cold GET + digest vs hashing while sending",
				"bridge-cold",
				"bare: hash while sending (no header possible)",
				fig["bare-stream"] ?? [],
			),
			mbRow(
				"upload while a download runs (two tokens)",
				"both-up",
				"the bridge's POST alone, same round",
				fig["bridge-post"] ?? [],
			),
			mbRow(
				"download while an upload runs (two tokens)",
				"both-down",
				"the bridge's GET alone, same round",
				fig["bridge-get"] ?? [],
			),
			row(
				"host VmHWM growth over the /blob rounds",
				"MiB",
				[(hwmAfter - hwmBefore) / 1024],
				"budget",
				[],
				"none",
				budget,
			),
			row(
				"host VmRSS growth, sampled every 5 ms during bridge transfers",
				"MiB",
				[(rssPeak - rssBefore) / 1024],
				"budget",
				[],
				"none",
				budget,
			),
		];
		const mb = (ms: number) => (size / 1e6 / (ms / 1000)).toFixed(0);
		const cpuNote = (key: string) => {
			const xs = threads[key] ?? [];
			return `main thread ${median(xs.map(x => x[0])).toFixed(0)} ms, other threads ${median(xs.map(x => x[1])).toFixed(0)} ms (${xs.map(x => `${x[0]}+${x[1]}`).join(", ")})`;
		};
		const notes = [
			`/blob plain GET, the server's CPU per transfer (median; each round main+others, ms): bridge (the host) ${cpuNote("bridge-get")}; bare ${cpuNote("bare-get")}`,
			`/blob: local file copy (copyFileSync, page cache) ${copyMs.map(mb).join(", ")} MB/s; host VmHWM ${(hwmBoot / 1024).toFixed(1)} MiB after boot, ${isReset ? "reset to the current RSS" : "not resettable, kept"} after a warm-up of every path (${WARM_MIB} MiB each: ${(hwmBefore / 1024).toFixed(1)} MiB); 1-minute load ${loadBefore.toFixed(2)} before the transfers, ${loadAfter.toFixed(2)} after`,
		];
		return { rows, notes };
	} finally {
		await bare?.stop();
		if (host) {
			await host.stop();
			host.cleanup();
		}
		rmSync(dir, { recursive: true, force: true });
	}
}

if (import.meta.main) {
	const { rows, notes } = await runBlobBench();
	console.log(`\n${printTable(rows, KNOBS.rounds)}\n`);
	for (const n of [...notes, targetsLine(rows)]) console.log(n);
}
