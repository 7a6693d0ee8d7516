/**
 * Download slots against the real host (issue 38 findings 5, 8 and 9; contract §19): a slot is free when
 * its response ends (300 downloads in a row, none refused), revoking a token cuts its slow download (a raw
 * socket's byte count and the audit line) and its digest wait, an upload's digest stops when its client
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
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
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

	/** `/a2a <text>`, resolved once the bridge answers with a notification `pred` accepts. */
	async function a2a(text: string, pred: (m: string) => boolean): Promise<string> {
		const before = host.notifications().length;
		await host.command(text);
		let found: string | undefined;
		await waitFor(`an answer to ${text}`, () => {
			found = host.notifications().slice(before).find(pred);
			return found !== undefined;
		});
		return found as string;
	}
	async function addToken(name: string): Promise<string> {
		const answer = await a2a(`/a2a token add ${name}`, m => m.startsWith(`A2A bridge: token '${name}' is live`));
		const secret = /Shown once:\n(\S+)\n/.exec(answer)?.[1];
		if (!secret) throw new Error(`no secret in: ${answer}`);
		return secret;
	}
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

	test("finding 5: a 48 MiB download read slowly stops when its token is revoked: the socket closes short, audited", async () => {
		const secret = await addToken("slowread");
		const file = join(host.home, "big-48.bin");
		const size = 48 * 1024 * 1024;
		const fd = openSync(file, "w");
		const block = Buffer.alloc(1024 * 1024, 7);
		for (let i = 0; i < 48; i++) writeSync(fd, block);
		closeSync(fd);
		const sock = connect(host.port, "127.0.0.1");
		let got = 0;
		let closed = false;
		// A slow reader: about 1 MiB/s once the first buffers are in.
		sock.on("data", d => {
			got += d.length;
			sock.pause();
			setTimeout(() => sock.resume(), 60);
		});
		sock.on("close", () => {
			closed = true;
		});
		sock.on("error", () => {});
		sock.write(
			`GET /blob?path=${encodeURIComponent(file)} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\n` +
				`Authorization: Bearer ${secret}\r\n\r\n`,
		);
		try {
			await waitFor("the first bytes", () => got > 256 * 1024, { timeoutMs: 15_000 });
			await revoke("slowread");
			const atRevoke = got;
			await waitFor("the connection closed", () => closed, { timeoutMs: 20_000 });
			// Far short of the file: without the cut, every byte would have come (the reader keeps reading).
			expect(got).toBeLessThan(size / 2);
			expect(got).toBeGreaterThanOrEqual(atRevoke);
			await waitFor("the cut's audit record", () => reads("slowread").some(r => r.isError));
			expect(reads("slowread").find(r => r.isError)).toMatchObject({
				error: "its token was revoked or rotated: this download was cut",
			});
		} finally {
			sock.destroy();
		}
	}, 90_000);

	test("finding 5: a Want-Repr-Digest wait of a revoked token ends at once, audited", async () => {
		const secret = await addToken("digestwait");
		const file = join(host.home, "sparse-8g.bin");
		// A sparse 8 GiB file: hashing it takes seconds, the wait is there long enough to be revoked.
		const fd = openSync(file, "w");
		writeSync(fd, "x", 8 * 1024 * 1024 * 1024 - 1);
		closeSync(fd);
		const started = performance.now();
		const pending = fetch(url(file), {
			headers: { authorization: `Bearer ${secret}`, "want-repr-digest": "sha-256=1" },
			signal: BOUND(60_000),
		}).then(
			async r => ({ status: r.status, body: await r.text() }),
			(err: unknown) => ({ status: 0, body: String(err) }),
		);
		await Bun.sleep(500);
		await revoke("digestwait");
		const answer = await pending;
		expect(performance.now() - started).toBeLessThan(30_000);
		expect(answer.status === 0 || answer.status >= 400).toBe(true);
		await waitFor("the wait's audit record", () => reads("digestwait").some(r => r.isError));
		const errors = reads("digestwait")
			.filter(r => r.isError)
			.map(r => r.error);
		expect(errors).toContain("its token was revoked or rotated while the file was hashed");
	}, 90_000);

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
