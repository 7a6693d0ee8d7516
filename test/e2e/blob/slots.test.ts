/**
 * Download slots against the real host (issue 38 findings 5, 8 and 9; contract §19): a slot is free when
 * its response ends (300 downloads in a row, none refused), revoking a token resets its slow download (a
 * small-buffer reader's byte count and reset, one audit record) and ends its digest wait, every end of a
 * download leaves exactly one audit record, an upload's digest stops when its client
 * leaves (/proc CPU), and a download names its file (`curl -OJ` saves it under that name). Every wait is
 * bounded.
 */
import { describe, expect, test } from "bun:test";
import {
	closeSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	truncateSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { a2aAnswer, addLiveToken } from "../../helpers/a2a-command.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { followReader } from "../../helpers/reader-progress.ts";
import { waitFor } from "../../helpers/wait.ts";

const BOUND = AbortSignal.timeout.bind(AbortSignal);

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** 120 more live tokens: a token's share of the 256 download slots is 2 (3 with the pool), so ghosts show. */
const CROWD = Array.from({ length: 120 }, (_, i) => ({ name: `crowd${i}`, token: `${crypto.randomUUID()}${i}` }));

describe("/blob download slots (issue 38)", () => {
	let host: Host;
	useSharedHost({ config: { tokens: CROWD } }, h => ({ host } = h));

	const url = (path: string) => new URL(`/blob?path=${encodeURIComponent(path)}`, host.url);
	const reads = (token: string) =>
		auditRecords<{ tool: string; token?: string; isError: boolean; args: string; error?: string }>(
			host,
			r => r.tool === "blob:read" && r.token === token,
		);

	const a2a = (text: string, pred: (m: string) => boolean) => a2aAnswer(host, text, pred);
	const addToken = (name: string) => addLiveToken(host, name);
	const revoke = (name: string) => a2a(`/a2a token revoke ${name}`, m => m.includes(`token '${name}' revoked`));

	test("finding 8: 300 downloads of a 5 KB file in a row by one client (share 2 of 256) -> none refused; 300 audited reads", async () => {
		const secret = await addToken("sequential");
		const file = join(host.home, "five-k.bin");
		writeFileSync(file, "k".repeat(5000));
		const statuses = new Map<number, number>();
		for (let i = 0; i < 300; i++) {
			const res = await fetch(url(file), { headers: { authorization: `Bearer ${secret}` }, signal: BOUND(15_000) });
			const body = await res.arrayBuffer();
			statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
			if (res.status === 200) expect(body.byteLength).toBe(5000);
		}
		expect([...statuses]).toEqual([[200, 300]]);
		// Second channel: the audit has 300 whole reads of this token and no refusal.
		await waitFor("300 audited reads", () => reads("sequential").length >= 300);
		const recs = reads("sequential");
		expect(recs.filter(r => r.isError)).toEqual([]);
		expect(recs.every(r => (JSON.parse(r.args) as { bytes: number }).bytes === 5000)).toBe(true);
	}, 120_000);

	/** A 48 MiB file of its own for one test. */
	function bigFile(name: string): string {
		const file = join(host.home, name);
		const fd = openSync(file, "w");
		const block = Buffer.alloc(1024 * 1024, 7);
		for (let i = 0; i < 48; i++) writeSync(fd, block);
		closeSync(fd);
		return file;
	}
	/** The reads of one file in the audit, with their parsed arguments. */
	const readsOf = (file: string) =>
		auditRecords<{ tool: string; args: string; isError: boolean; error?: string }>(
			host,
			r => r.tool === "blob:read" && String(r.args).includes(file),
		);

	/** A raw GET read slowly through a small receive buffer (test/fixtures/slow_reader.py), its lines as they come. */
	function slowReader(file: string, token: string, rate: number, digest = false) {
		const target = `/blob?path=${encodeURIComponent(file)}`;
		const script = join(import.meta.dir, "../../fixtures/slow_reader.py");
		const proc = Bun.spawn(
			["python3", script, String(host.port), target, token, String(rate), ...(digest ? ["digest"] : [])],
			{
				stdout: "pipe",
				stderr: "inherit",
			},
		);
		const state = followReader(proc.stdout);
		return { state, proc };
	}

	for (const digest of [false, true]) {
		test(`issue 38.3: a slow download${digest ? " with Want-Repr-Digest" : ""} of a revoked token is reset: < 256 KiB after the revoke, one audit record`, async () => {
			const name = digest ? "slowdigest" : "slowread";
			const secret = await addToken(name);
			const file = bigFile(`big-48-${name}.bin`);
			// 256 KiB/s: without the reset the kernel's queued send buffer (MBs) drains to this reader for seconds.
			const { state, proc } = slowReader(file, secret, 256 * 1024, digest);
			try {
				await waitFor("the first bytes", () => state.got > 512 * 1024, { timeoutMs: 20_000 });
				// The receive side is small, so what arrives after the revoke is what the host still sends.
				expect(state.rcvbuf).toBeLessThanOrEqual(64 * 1024);
				const atRevoke = state.got;
				const revokedAt = performance.now();
				await revoke(name);
				await waitFor("the reader's end", () => state.end !== undefined, { timeoutMs: 30_000 });
				const after = state.got - atRevoke;
				expect({ end: state.end, afterUnder256KiB: after < 256 * 1024 }).toEqual({
					end: "reset",
					afterUnder256KiB: true,
				});
				expect(state.endedAt - revokedAt).toBeLessThan(5_000);
				// Second channel: the audit holds one record for this download (issue 38.3), written when it began.
				await Bun.sleep(1000);
				const recs = readsOf(file);
				expect(recs).toHaveLength(1);
				expect(recs[0]).toMatchObject({ isError: false });
				expect(host.stderr).toContain(`its token was revoked or rotated: a download of ${file} was reset`);
			} finally {
				proc.kill();
			}
		}, 90_000);
	}

	test("issue 38.3: one audit record per download whatever ends it (normal, client leaves, revoke, digest wait)", async () => {
		/** A sparse 8 GiB file: hashing it takes seconds, so the wait is there to be ended. */
		const sparse = (name: string) => {
			const file = join(host.home, name);
			const fd = openSync(file, "w");
			writeSync(fd, "x", 8 * 1024 * 1024 * 1024 - 1);
			closeSync(fd);
			return file;
		};
		const get = (file: string, token: string, digest: boolean, signal: AbortSignal) =>
			fetch(url(file), {
				headers: { authorization: `Bearer ${token}`, ...(digest ? { "want-repr-digest": "sha-256=1" } : {}) },
				signal,
			}).then(
				async r => void (await r.arrayBuffer()),
				() => {},
			);
		const causes: Array<{ cause: string; run(): Promise<{ file: string; error: string | undefined }> }> = [
			{
				cause: "normal end, digest wait ended by the hash",
				run: async () => {
					const file = join(host.home, "one-normal-digest.bin");
					writeFileSync(file, "d".repeat(70_000));
					await get(file, host.token, true, BOUND(15_000));
					return { file, error: undefined };
				},
			},
			{
				cause: "normal end",
				run: async () => {
					const file = join(host.home, "one-normal.bin");
					writeFileSync(file, "n".repeat(70_000));
					await get(file, host.token, false, BOUND(15_000));
					return { file, error: undefined };
				},
			},
			{
				cause: "client leaves during the digest wait",
				run: async () => {
					const file = sparse("one-leave-digest.bin");
					const ac = new AbortController();
					const pending = get(file, host.token, true, ac.signal);
					await Bun.sleep(500);
					ac.abort();
					await pending;
					return { file, error: "client disconnected while the file was hashed" };
				},
			},
			{
				cause: "revoke during the digest wait",
				run: async () => {
					const secret = await addToken("onerevoke");
					const file = sparse("one-revoke-digest.bin");
					const pending = get(file, secret, true, BOUND(60_000));
					await Bun.sleep(500);
					await revoke("onerevoke");
					await pending;
					return { file, error: "its token was revoked or rotated while the file was hashed" };
				},
			},
			{
				cause: "client leaves mid-stream",
				run: async () => {
					const file = bigFile("one-leave-stream.bin");
					const { state, proc } = slowReader(file, host.token, 256 * 1024);
					await waitFor("the first bytes", () => state.got > 256 * 1024, { timeoutMs: 20_000 });
					proc.kill();
					await proc.exited;
					return { file, error: undefined };
				},
			},
		];
		for (const { cause, run } of causes) {
			const { file, error } = await run();
			// A second record would come after the first: give it time, then count by the file's path.
			await waitFor(`${cause}: its record`, () => readsOf(file).length > 0, { timeoutMs: 30_000 });
			await Bun.sleep(1500);
			const recs = readsOf(file);
			expect({ cause, records: recs.length }).toEqual({ cause, records: 1 });
			expect({ cause, error: recs[0]?.error }).toEqual({ cause, error });
		}
	}, 120_000);

	test("finding 9: an upload's digest stops when its client leaves: the audit says so, the host's CPU goes quiet (/proc)", async () => {
		// A host just started is still busy for a while: wait until it is quiet (0.1 s of CPU over 1 s).
		await waitFor(
			"a quiet host",
			async () => {
				const c0 = cpuSeconds(host.proc.pid);
				await Bun.sleep(1000);
				return cpuSeconds(host.proc.pid) - c0 < 0.1;
			},
			{ timeoutMs: 30_000 },
		);
		// One byte appended to a sparse 16 GiB file: the reply's whole-file sha256 means hashing 16 GiB (seconds).
		const file = join(host.home, "sparse-append.img");
		writeFileSync(file, "");
		const size = 16 * 1024 * 1024 * 1024;
		truncateSync(file, size);
		const sock = connect(host.port, "127.0.0.1");
		sock.on("error", () => {});
		sock.write(
			`POST /blob?path=${encodeURIComponent(file)}&offset=${size} HTTP/1.1\r\n` +
				`Host: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\nContent-Length: 1\r\n\r\nx`,
		);
		await Bun.sleep(400);
		sock.destroy();
		// Measured from just after the client left: a hash running on would burn seconds of CPU here.
		await Bun.sleep(500);
		const cpu0 = cpuSeconds(host.proc.pid);
		await Bun.sleep(2000);
		expect(cpuSeconds(host.proc.pid) - cpu0).toBeLessThan(0.2);
		const writes = () =>
			auditRecords<{ tool: string; args: string; error?: string }>(
				host,
				r => r.tool === "blob:write" && String(r.args).includes("sparse-append.img"),
			);
		await waitFor("the upload's record", () => writes().length > 0, { timeoutMs: 30_000 });
		expect(writes()[0]?.error).toBe("client disconnected while the upload was hashed");
	}, 60_000);

	test("finding 9: Content-Disposition names the file; curl -OJ saves it under that name, a hostile name stays one header", async () => {
		const name = "firmware-1.2.bin";
		const file = join(host.home, name);
		writeFileSync(file, "FW");
		const res = await fetch(url(file), { headers: { authorization: `Bearer ${host.token}` }, signal: BOUND(15_000) });
		expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
		await res.arrayBuffer();
		const into = mkdtempSync(join(tmpdir(), "curl-oj-"));
		const curl = Bun.spawnSync(
			["curl", "-sS", "--max-time", "15", "-OJ", "-H", `Authorization: Bearer ${host.token}`, url(file).href],
			{ cwd: into },
		);
		expect(curl.exitCode).toBe(0);
		expect(readdirSync(into)).toEqual([name]);
		expect(readFileSync(join(into, name), "utf8")).toBe("FW");
		const hostile = 'r"e\\p\u00f6rt\u202e.txt';
		writeFileSync(join(host.home, hostile), "H");
		const h = await fetch(url(join(host.home, hostile)), {
			headers: { authorization: `Bearer ${host.token}` },
			signal: BOUND(15_000),
		});
		expect(h.headers.get("content-disposition")).toBe(
			"attachment; filename=\"r_e_p_rt_.txt\"; filename*=UTF-8''r%22e%5Cp%C3%B6rt%E2%80%AE.txt",
		);
		expect(await h.text()).toBe("H");
	}, 60_000);
});
