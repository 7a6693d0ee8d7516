/**
 * `/blob` against a real host. Every claim is checked through a second channel as well: the file on
 * disk and its sha256, and the audit line. The disconnect cases use a raw TCP socket that sends part
 * of a body and is destroyed, as a dropped client would.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, openSession, useSharedHost } from "../../helpers/host.ts";
import { feed, rawUpload } from "../../helpers/raw-upload.ts";
import { waitFor } from "../../helpers/wait.ts";

interface Rec {
	id: string;
	sid: string | null;
	phase: string;
	tool: string;
	isError: boolean;
	args: string;
	error?: string;
}
interface BlobArgs {
	path: string | null;
	offset: number | null;
	bytes: number;
	method?: string;
}

const MIB = 1024 * 1024;
const sha = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");

/** Every byte value 0..255 first, then random bytes: a byte-exact round trip has nowhere to hide. */
function payload(size: number): Uint8Array {
	const out = new Uint8Array(size);
	for (let i = 0; i < 256 && i < size; i++) out[i] = i;
	for (let off = 256; off < size; off += 65536) crypto.getRandomValues(out.subarray(off, Math.min(size, off + 65536)));
	return out;
}

describe("/blob on a real host", () => {
	let host: Host;

	useSharedHost({}, h => ({ host } = h));

	const url = (query: string) => new URL(`/blob?${query}`, host.url);
	const auth = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${host.token}`, ...extra });
	const q = (path: string, offset?: number) =>
		`path=${encodeURIComponent(path)}${offset === undefined ? "" : `&offset=${offset}`}`;
	const post = (
		query: string,
		body: Uint8Array | string | ReadableStream<Uint8Array> | null,
		headers: Record<string, string> = {},
	) => fetch(url(query), { method: "POST", headers: auth(headers), body });
	const get = (query: string, headers: Record<string, string> = {}, method = "GET") =>
		fetch(url(query), { method, headers: auth(headers) });
	const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

	const records = (): Array<Rec & { a: BlobArgs }> =>
		auditRecords<Rec>(host, r => r.tool.startsWith("blob:")).map(r => ({ ...r, a: JSON.parse(r.args) as BlobArgs }));
	const recordsFor = (path: string) => records().filter(r => r.a.path === path);

	test("byte-identical round trip of every byte value: reply, disk, download and audit agree", async () => {
		const data = payload(3 * MIB + 17);
		const file = join(host.home, "rt", "deep", "all-bytes.bin");
		const res = await post(q("~/rt/deep/all-bytes.bin"), data);
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({
			path: file,
			offset: 0,
			written: data.byteLength,
			size: data.byteLength,
			sha256: sha(data),
			request_sha256: sha(data),
		});
		expect(sha(readFileSync(file))).toBe(sha(data));

		const down = await get(q(file));
		expect(down.status).toBe(200);
		expect(down.headers.get("content-length")).toBe(String(data.byteLength));
		expect(down.headers.get("accept-ranges")).toBe("bytes");
		expect(sha(await bytesOf(down))).toBe(sha(data));

		const [w, r] = recordsFor(file);
		expect(w).toMatchObject({ phase: "done", tool: "blob:write", isError: false, sid: null });
		expect(w?.a).toEqual({ path: file, offset: 0, bytes: data.byteLength, method: "POST" });
		expect(r).toMatchObject({ tool: "blob:read", isError: false });
		expect(r?.a).toEqual({ path: file, offset: 0, bytes: data.byteLength });
		// Contents never reach the log, not even as a hash of the file.
		expect(readFileSync(host.auditPath, "utf8")).not.toContain(sha(data));
	}, 60_000);

	test("paths: relative -> Main's working directory, ~ -> HOME, absolute as given; reply names the resolved path", async () => {
		const rel = await post(q("sub/rel.txt"), "rel");
		expect(await rel.json()).toMatchObject({ path: join(host.cwd, "sub", "rel.txt") });
		expect(readFileSync(join(host.cwd, "sub", "rel.txt"), "utf8")).toBe("rel");
		const abs = join(host.home, "abs.txt");
		expect(await (await post(q(abs), "abs")).json()).toMatchObject({ path: abs });
		expect(readFileSync(abs, "utf8")).toBe("abs");
		const dotdot = await post(q("../up.txt"), "up");
		expect(await dotdot.json()).toMatchObject({ path: join(host.home, "up.txt") });
	}, 30_000);

	test("POST without offset never appends: 409 file_exists {size} naming PUT and offset, file byte-identical", async () => {
		const file = join(host.home, "append.txt");
		await post(q(file), "one,");
		const res = await post(q(file), "two");
		expect(res.status).toBe(409);
		const body = (await res.json()) as { code: string; size: number; error: string };
		expect(body).toMatchObject({ code: "file_exists", size: 4 });
		expect(body.error).toContain("PUT /blob");
		expect(body.error).toContain("offset=4");
		expect(readFileSync(file, "utf8")).toBe("one,");
		expect(recordsFor(file).at(-1)).toMatchObject({ isError: true, a: { bytes: 0, method: "POST" } });
	}, 30_000);

	test("POST with offset appends: sha256 is the whole file now, request_sha256 this request's bytes", async () => {
		const file = join(host.home, "append2.txt");
		await post(q(file), "one,");
		const res = await post(q(file, 4), "two");
		expect(await res.json()).toEqual({
			path: file,
			offset: 4,
			written: 3,
			size: 7,
			sha256: sha("one,two"),
			request_sha256: sha("two"),
		});
		expect(readFileSync(file, "utf8")).toBe("one,two");
	}, 30_000);

	test("a client that disconnects mid-upload: prefix on disk, one audit record, no lock; resume completes the file", async () => {
		// Declared larger than the worker threshold: the disconnect also cancels a hashing worker.
		const data = payload(12 * MIB);
		const file = join(host.home, "resume.bin");
		const sent = 1536 * 1024;
		const { sock } = await rawUpload(host, "POST", `/blob?${q(file)}`, data.byteLength);
		await feed(sock, data.subarray(0, sent));
		// Disconnect once the upload is under way: its first bytes are on disk.
		await waitFor("the first bytes on disk", () => (existsSync(file) && statSync(file).size > 0) || undefined, {
			timeoutMs: 10_000,
		});
		sock.destroy();

		const rec = await waitFor("the disconnect audit record", () => recordsFor(file).at(-1), { timeoutMs: 10_000 });
		expect(rec).toMatchObject({ tool: "blob:write", isError: true, error: "client disconnected" });
		const landed = statSync(file).size;
		expect(rec.a).toEqual({ path: file, offset: 0, bytes: landed, method: "POST" });
		expect(landed).toBeGreaterThan(0);
		expect(landed).toBeLessThanOrEqual(sent);
		expect(sha(readFileSync(file))).toBe(sha(data.subarray(0, landed)));
		expect(recordsFor(file)).toHaveLength(1);
		expect(host.stderr).not.toContain("internal error");

		// Resume in two more chunks, each at the size the server reports.
		const mid = landed + Math.floor((data.byteLength - landed) / 2);
		const r1 = await post(q(file, landed), data.subarray(landed, mid));
		expect(await r1.json()).toMatchObject({ offset: landed, written: mid - landed, size: mid });
		const r2 = await post(q(file, mid), data.subarray(mid));
		expect(await r2.json()).toMatchObject({
			offset: mid,
			size: data.byteLength,
			sha256: sha(data),
			request_sha256: sha(data.subarray(mid)),
		});
		expect(sha(readFileSync(file))).toBe(sha(data));
	}, 60_000);

	test("range cases: a-b, a-, -n, clamped end -> 206 with Content-Range; HEAD gives the size", async () => {
		const data = payload(MIB);
		const file = join(host.home, "ranges.bin");
		writeFileSync(file, data);
		const size = data.byteLength;
		const cases: Array<[string, number, number]> = [
			["bytes=0-0", 0, 0],
			["bytes=0-1023", 0, 1023],
			["bytes=1000-", 1000, size - 1],
			["bytes=-4096", size - 4096, size - 1],
			["bytes=-99999999", 0, size - 1],
			[`bytes=${size - 10}-${size + 10}`, size - 10, size - 1],
		];
		for (const [range, start, end] of cases) {
			const res = await get(q(file), { range });
			expect(res.status).toBe(206);
			expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/${size}`);
			expect(res.headers.get("content-length")).toBe(String(end - start + 1));
			expect(sha(await bytesOf(res))).toBe(sha(data.subarray(start, end + 1)));
		}
		const head = await get(q(file), {}, "HEAD");
		expect(head.status).toBe(200);
		expect(head.headers.get("content-length")).toBe(String(size));
		expect(head.headers.get("accept-ranges")).toBe("bytes");
		expect((await head.arrayBuffer()).byteLength).toBe(0);
		const reads = recordsFor(file).map(r => r.a);
		expect(reads.slice(0, 3)).toEqual([
			{ path: file, offset: 0, bytes: 1 },
			{ path: file, offset: 0, bytes: 1024 },
			{ path: file, offset: 1000, bytes: size - 1000 },
		]);
	}, 30_000);

	test("unsatisfiable ranges -> 416 range_not_satisfiable with Content-Range bytes */size; several ranges -> 200 whole", async () => {
		const file = join(host.home, "small.txt");
		writeFileSync(file, "0123456789");
		const several = await get(q(file), { range: "bytes=0-1,4-5" });
		expect(several.status).toBe(200);
		expect(several.headers.get("content-range")).toBeNull();
		expect(await several.text()).toBe("0123456789");
		for (const range of ["bytes=10-", "bytes=20-30", "bytes=5-2", "bytes=-0", "bytes=x-"]) {
			const res = await get(q(file), { range });
			expect(res.status).toBe(416);
			expect(res.headers.get("content-range")).toBe("bytes */10");
			expect(await res.json()).toMatchObject({ code: "range_not_satisfiable" });
		}
		const empty = join(host.home, "empty.txt");
		writeFileSync(empty, "");
		expect((await get(q(empty), { range: "bytes=0-" })).status).toBe(416);
		const whole = await get(q(empty));
		expect(whole.status).toBe(200);
		expect(whole.headers.get("content-length")).toBe("0");
	}, 30_000);

	test("409 offset_mismatch: offset below or above the size -> file untouched", async () => {
		const file = join(host.home, "conflict.txt");
		writeFileSync(file, "abcdef");
		for (const offset of [0, 5, 7, 1000]) {
			const res = await post(q(file, offset), "XYZ");
			expect(res.status).toBe(409);
			const body = (await res.json()) as { code: string; error: string };
			expect(body.code).toBe("offset_mismatch");
			expect(body.error).toContain(`offset ${offset} does not match the current size 6`);
		}
		expect(readFileSync(file, "utf8")).toBe("abcdef");
		const missing = join(host.home, "never", "made.txt");
		expect((await post(q(missing, 3), "x")).status).toBe(409);
		expect(existsSync(join(host.home, "never"))).toBe(false);
	}, 30_000);

	test("409 upload_in_progress: a second upload to a path in flight is refused; the first completes", async () => {
		const file = join(host.home, "busy.bin");
		const data = payload(2 * MIB);
		const half = MIB;
		const first = await rawUpload(host, "POST", `/blob?${q(file)}`, data.byteLength);
		await feed(first.sock, data.subarray(0, half));
		await waitFor("the first upload to land", () => (existsSync(file) && statSync(file).size > 0 ? true : undefined), {
			timeoutMs: 10_000,
		});
		const second = await post(q(file), "intruder");
		expect(second.status).toBe(409);
		expect(await second.json()).toMatchObject({ code: "upload_in_progress" });
		await feed(first.sock, data.subarray(half));
		const reply = await first.reply;
		expect(reply.startsWith("HTTP/1.1 200")).toBe(true);
		expect(reply).toContain(`"sha256":"${sha(data)}"`);
		expect(sha(readFileSync(file))).toBe(sha(data));
	}, 60_000);

	test("concurrent uploads to different paths -> both intact", async () => {
		const a = payload(4 * MIB);
		const b = payload(4 * MIB + 1);
		const [ra, rb] = await Promise.all([post(q("~/par/a.bin"), a), post(q("~/par/b.bin"), b)]);
		expect(await ra.json()).toMatchObject({ sha256: sha(a), size: a.byteLength });
		expect(await rb.json()).toMatchObject({ sha256: sha(b), size: b.byteLength });
		expect(sha(readFileSync(join(host.home, "par", "a.bin")))).toBe(sha(a));
		expect(sha(readFileSync(join(host.home, "par", "b.bin")))).toBe(sha(b));
	}, 60_000);

	test("large uploads (hashed by a worker while they stream), two at once, one after a prefix: sha256 of each request", async () => {
		const prefix = payload(MIB);
		const big = join(host.home, "par", "big-after-prefix.bin");
		writeFileSync(big, prefix);
		const a = payload(20 * MIB);
		const b = payload(20 * MIB + 7);
		const [ra, rb] = await Promise.all([post(q(big, MIB), a), post(q("~/par/big.bin"), b)]);
		expect(await ra.json()).toEqual({
			path: big,
			offset: MIB,
			written: a.byteLength,
			size: MIB + a.byteLength,
			sha256: sha(Buffer.concat([prefix, a])),
			request_sha256: sha(a),
		});
		expect(await rb.json()).toMatchObject({ offset: 0, written: b.byteLength, sha256: sha(b), request_sha256: sha(b) });
		expect(sha(readFileSync(big))).toBe(sha(Buffer.concat([prefix, a])));
		expect(sha(readFileSync(join(host.home, "par", "big.bin")))).toBe(sha(b));
		expect(host.stderr).not.toContain("internal error");
	}, 60_000);

	test("a device (/dev/full) -> 400 not_regular_file naming the path; audited with 0 bytes", async () => {
		const res = await post(q("/dev/full"), payload(64 * 1024));
		expect(res.status).toBe(400);
		const body = (await res.json()) as { code: string; error: string };
		expect(body.code).toBe("not_regular_file");
		expect(body.error).toContain("/dev/full");
		const rec = recordsFor("/dev/full").at(-1);
		expect(rec).toMatchObject({ tool: "blob:write", isError: true });
		expect(rec?.a).toEqual({ path: "/dev/full", offset: null, bytes: 0, method: "POST" });
	}, 30_000);

	test("error table: each case -> its status and stable code", async () => {
		mkdirSync(join(host.home, "adir"), { recursive: true });
		const cases: Array<[string, () => Promise<Response>, number, string]> = [
			["empty body", () => post(q("~/e.txt"), ""), 400, "empty_body"],
			[
				"empty chunked body",
				() => post(q("~/new-dir/e.txt"), new ReadableStream({ start: c => c.close() })),
				400,
				"empty_body",
			],
			["empty path", () => post("path=", "x"), 400, "bad_path"],
			["no path", () => post("offset=0", "x"), 400, "bad_path"],
			["NUL in path", () => post("path=a%00b", "x"), 400, "bad_path"],
			["negative offset", () => post(`${q("~/o.txt")}&offset=-1`, "x"), 400, "bad_offset"],
			["non-decimal offset", () => post(`${q("~/o.txt")}&offset=0x10`, "x"), 400, "bad_offset"],
			["offset on GET", () => get(`${q("~/abs.txt")}&offset=0`), 400, "bad_offset"],
			["GET missing", () => get(q("~/does-not-exist")), 404, "not_found"],
			["GET directory", () => get(q("~/adir")), 400, "is_directory"],
			["POST directory", () => post(q("~/adir"), "x"), 400, "is_directory"],
			["GET device", () => get(q("/dev/null")), 400, "not_regular_file"],
			["POST device", () => post(q("/dev/null"), "x"), 400, "not_regular_file"],
		];
		for (const [name, send, status, code] of cases) {
			const res = await send();
			expect([name, res.status, res.headers.get("content-type")]).toEqual([name, status, "application/json"]);
			const body = (await res.json()) as { code: string; error: string };
			expect([name, body.code]).toEqual([name, code]);
			expect(body.error.length).toBeGreaterThan(0);
		}
		expect(existsSync(join(host.home, "e.txt"))).toBe(false);
		expect(existsSync(join(host.home, "new-dir"))).toBe(false);
		expect(existsSync(join(host.home, "o.txt"))).toBe(false);
		const head = await get(q("~/does-not-exist"), {}, "HEAD");
		expect(head.status).toBe(404);
	}, 30_000);

	test("other methods -> 405 with Allow; no token or a wrong one -> 401, not audited", async () => {
		const before = records().length;
		for (const method of ["DELETE", "PATCH"]) {
			const res = await fetch(url(q("~/x")), { method, headers: auth() });
			expect(res.status).toBe(405);
			expect(res.headers.get("allow")).toBe("PUT, POST, GET, HEAD");
			expect(await res.json()).toEqual({ error: "method not allowed", code: "method_not_allowed" });
		}
		const none = await fetch(url(q("~/x")), { method: "POST", body: "x" });
		expect(none.status).toBe(401);
		expect(await none.json()).toEqual({ error: "unauthorized", code: "unauthorized" });
		const wrong = await fetch(url(q("~/x")), { headers: { authorization: "Bearer not-the-token" } });
		expect(wrong.status).toBe(401);
		expect(await wrong.json()).toEqual({ error: "unauthorized", code: "invalid_token" });
		expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
		expect(existsSync(join(host.home, "x"))).toBe(false);
		expect(records().length).toBe(before);
	}, 30_000);

	test("sessions optional: an issued session id is recorded, a made-up one is recorded as null", async () => {
		const sid = await openSession(host);
		const file = join(host.home, "sid.txt");
		expect((await post(q(file), "a", { "mcp-session-id": sid })).status).toBe(200);
		expect((await post(q(file, 1), "b", { "mcp-session-id": "made-up-session" })).status).toBe(200);
		expect((await post(q(file, 2), "c")).status).toBe(200);
		expect(recordsFor(file).map(r => r.sid)).toEqual([sid, null, null]);
	}, 30_000);
});
