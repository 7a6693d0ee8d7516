/**
 * `/blob` hardening (contract §15) against the real host: regular files only, decided without
 * blocking; pseudo-files streamed to EOF; one upload per file whatever its name; `written`/`sha256`
 * describe this request's bytes only; a stalled upload ends (bound shortened to 2 s here through
 * A2A_BRIDGE_BLOB_STALL_MS) and frees its lock. Every wait is bounded.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const sha = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");
const BOUND = AbortSignal.timeout.bind(AbortSignal);

describe("/blob hardening", () => {
	let host: Host;
	useSharedHost({ env: { A2A_BRIDGE_BLOB_STALL_MS: "2000" } }, h => ({ host } = h));

	const url = (path: string, offset?: number) =>
		new URL(`/blob?path=${encodeURIComponent(path)}${offset === undefined ? "" : `&offset=${offset}`}`, host.url);
	const post = (path: string, body: string | Uint8Array, offset?: number) =>
		fetch(url(path, offset), {
			method: "POST",
			headers: { authorization: `Bearer ${host.token}` },
			body,
			signal: BOUND(15_000),
		});
	const get = (path: string, method = "GET") =>
		fetch(url(path), { method, headers: { authorization: `Bearer ${host.token}` }, signal: BOUND(15_000) });
	const ping = async () => {
		const res = await fetch(new URL("/nowhere", host.url), { signal: BOUND(5000) });
		return res.status;
	};
	const records = () =>
		auditRecords<{ tool: string; isError: boolean; args: string; error?: string }>(
			host,
			r => r.tool === "blob:write",
		).map(r => ({ ...r, a: JSON.parse(r.args) as { path: string; offset: number; bytes: number } }));

	/** A raw upload whose body the test feeds by hand. */
	function rawUpload(
		path: string,
		contentLength: number,
		offset?: number,
	): Promise<{ sock: Socket; reply: Promise<string> }> {
		const at = offset === undefined ? "" : `&offset=${offset}`;
		return new Promise((resolve, reject) => {
			const sock = connect(host.port, "127.0.0.1", () => {
				sock.write(
					`POST /blob?path=${encodeURIComponent(path)}${at} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\n` +
						`Authorization: Bearer ${host.token}\r\nContent-Length: ${contentLength}\r\n\r\n`,
				);
				let text = "";
				const reply = new Promise<string>(done => {
					sock.on("data", d => {
						text += d.toString("latin1");
						if (/\r\n\r\n[\s\S]*\}$/.test(text)) done(text);
					});
					sock.on("close", () => done(text));
				});
				resolve({ sock, reply });
			});
			sock.on("error", reject);
		});
	}
	const written = (sock: Socket, data: string | Uint8Array) =>
		new Promise<void>((resolve, reject) => sock.write(data, err => (err ? reject(err) : resolve())));
	const bodyOf = (reply: string) => JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));

	test("upload to a FIFO -> 400 not_regular_file at once; the host keeps answering", async () => {
		const fifo = join(host.home, "pipe");
		expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
		const res = await post(fifo, "x".repeat(200_000));
		expect(res.status).toBe(400);
		expect(await res.json()).toMatchObject({ code: "not_regular_file" });
		expect(await ping()).toBe(404);
		const down = await get(fifo);
		expect(down.status).toBe(400);
		expect(await down.json()).toMatchObject({ code: "not_regular_file" });
	}, 30_000);

	test("upload to /dev/stdin of the headless host -> 400 not_regular_file; no rpc command is injected", async () => {
		const injected = `inj-${crypto.randomUUID()}`;
		const res = await post("/dev/stdin", `${JSON.stringify({ id: injected, type: "get_state" })}\n`);
		expect(res.status).toBe(400);
		expect(await res.json()).toMatchObject({ code: "not_regular_file" });
		// Our own command goes down the same pipe after it: had the upload landed, its answer came first.
		await host.barrier();
		expect(host.frames.filter(f => f.id === injected)).toEqual([]);
	}, 30_000);

	test("GET /proc/cpuinfo -> 200 streamed to EOF without Content-Length; a /sys file -> its real bytes, ended", async () => {
		const cpu = await get("/proc/cpuinfo");
		expect(cpu.status).toBe(200);
		expect(cpu.headers.get("content-length")).toBeNull();
		const text = await cpu.text();
		expect(text).toContain("processor");
		const sysFile = "/sys/kernel/mm/transparent_hugepage/enabled";
		const sys = await get(sysFile);
		expect(sys.status).toBe(200);
		expect(await sys.text()).toBe(readFileSync(sysFile, "utf8"));
		const head = await get("/proc/cpuinfo", "HEAD");
		expect(head.status).toBe(200);
		expect(head.headers.get("content-length")).toBeNull();
	}, 30_000);

	test("two concurrent uploads to one file under two names (a symlink) -> the second gets 409; the first's reply is its own bytes", async () => {
		const real = join(host.home, "one-file.bin");
		const alias = join(host.home, "alias.bin");
		writeFileSync(real, "");
		symlinkSync(real, alias);
		const first = "A".repeat(100_000);
		const { sock, reply } = await rawUpload(real, first.length);
		await written(sock, first.slice(0, 50_000));
		await waitFor("the first upload's bytes", () => (statSync(real).size > 0 ? true : undefined));
		const second = await post(alias, "B".repeat(1000));
		expect(second.status).toBe(409);
		expect(await second.json()).toMatchObject({ code: "upload_in_progress" });
		await written(sock, first.slice(50_000));
		const body = bodyOf(await reply);
		sock.destroy();
		expect(body).toEqual({
			path: real,
			offset: 0,
			written: first.length,
			size: first.length,
			sha256: sha(first),
			request_sha256: sha(first),
		});
		expect(readFileSync(real, "utf8")).toBe(first);
	}, 30_000);

	test("the file grew by more than this upload wrote (another writer) -> 409 file_changed, no sha256, audited", async () => {
		const file = join(host.home, "shared.log");
		writeFileSync(file, "start\n");
		const mine = "m".repeat(20_000);
		const { sock, reply } = await rawUpload(file, mine.length, 6);
		await written(sock, mine.slice(0, 10_000));
		await waitFor("the upload's first bytes", () => (statSync(file).size > 6 ? true : undefined));
		appendFileSync(file, "FOREIGN");
		await written(sock, mine.slice(10_000));
		const text = await reply;
		sock.destroy();
		expect(text).toStartWith("HTTP/1.1 409");
		const body = bodyOf(text);
		expect(body.code).toBe("file_changed");
		expect(body.sha256).toBeUndefined();
		const rec = await waitFor("the audit record", () => records().find(r => r.a.path === file));
		expect(rec.isError).toBe(true);
	}, 30_000);

	test("an upload that receives no byte for the stall bound -> connection ended, bytes kept, audited, the resume is not refused", async () => {
		const file = join(host.home, "stalled.bin");
		const { sock, reply } = await rawUpload(file, 100_000);
		await written(sock, "s".repeat(30_000));
		const closed = new Promise<void>(r => sock.on("close", () => r()));
		await Promise.race([closed, Bun.sleep(20_000).then(() => Promise.reject(new Error("stalled upload not ended")))]);
		await reply;
		const rec = await waitFor("the stall audit record", () => records().find(r => r.a.path === file));
		expect(rec).toMatchObject({ isError: true });
		expect(rec.error).toContain("stalled");
		expect(rec.a.bytes).toBe(30_000);
		expect(statSync(file).size).toBe(30_000);
		const resume = await post(file, "t".repeat(70_000), 30_000);
		expect(resume.status).toBe(200);
		expect(await resume.json()).toMatchObject({ offset: 30_000, written: 70_000, size: 100_000 });
	}, 40_000);
});
