import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { BLOB_METHODS } from "../../../src/blob/parse.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { NO_SLOTS, TokenHoldings } from "../../../src/core/holdings.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("createBlobRoute (handle without a socket)", () => {
	let dir: string;
	let audits: AuditRecord[];
	let logs: string[];
	let route: ReturnType<typeof createBlobRoute>;

	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "blob-unit-"));
		mkdirSync(join(dir, "home"));
		mkdirSync(join(dir, "cwd"));
		audits = [];
		logs = [];
		route = createBlobRoute({
			home: () => join(dir, "home"),
			cwd: () => join(dir, "cwd"),
			audit: r => audits.push(r),
			log: l => logs.push(l),
			config: () => ({ blob: "write" }),
		});
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	const call = (
		method: string,
		query: string,
		body?: string | Uint8Array | ReadableStream<Uint8Array> | null,
		headers: Record<string, string> = {},
	) =>
		route.handle(
			new Request(`http://127.0.0.1:9/blob?${query}`, { method, body: body ?? null, headers }),
			routeCtx({ sid: "sid-1" }),
		);
	/** A request body the test feeds by hand: `push.enqueue`, `push.close()`, `push.error()`. */
	const pushBody = () => {
		let push: ReadableStreamDefaultController<Uint8Array> | undefined;
		const body = new ReadableStream<Uint8Array>({
			start: c => {
				push = c;
			},
		});
		if (!push) throw new Error("ReadableStream start did not run synchronously");
		return { body, push };
	};
	const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
	/** Resolves once `rel` under cwd holds `text`: the upload in flight has written what was pushed. */
	const landed = (rel: string, text: string) =>
		waitFor(`${rel} to hold ${JSON.stringify(text)}`, () => {
			const p = join(dir, "cwd", rel);
			return existsSync(p) && readFileSync(p, "utf8") === text;
		});

	test("no working directory from the host (fact main-cwd): a relative path is refused naming it, nothing written", async () => {
		const noCwd = createBlobRoute({
			home: () => join(dir, "home"),
			cwd: () => null,
			audit: r => audits.push(r),
			log: () => {},
			config: () => ({ blob: "write" }),
		});
		const put = (path: string) =>
			noCwd.handle(new Request(`http://127.0.0.1:9/blob?path=${path}`, { method: "PUT", body: "x" }), routeCtx());
		const rel = await put("out.txt");
		expect(rel.status).toBe(400);
		expect(((await rel.json()) as { code: string; error: string }).error).toContain("host fact 'main-cwd' missing");
		expect(existsSync(join(dir, "cwd", "out.txt"))).toBe(false);
		expect(audits.at(-1)?.error).toContain("main-cwd");
		const abs = await put(encodeURIComponent(join(dir, "home", "abs.txt")));
		expect(abs.status).toBe(200);
		expect(readFileSync(join(dir, "home", "abs.txt"), "utf8")).toBe("x");
	});

	test("methods are PUT, POST, GET, HEAD", () => {
		expect([...route.methods]).toEqual([...BLOB_METHODS]);
		expect([...BLOB_METHODS]).toEqual(["PUT", "POST", "GET", "HEAD"]);
	});

	test("relative upload -> lands under cwd with parents created; reply and audit agree", async () => {
		const res = await call("POST", "path=a/b/c.txt", "hello");
		expect(res.status).toBe(200);
		const file = join(dir, "cwd", "a", "b", "c.txt");
		expect(await res.json()).toEqual({
			path: file,
			offset: 0,
			written: 5,
			size: 5,
			sha256: sha("hello"),
			request_sha256: sha("hello"),
		});
		expect(readFileSync(file, "utf8")).toBe("hello");
		expect(audits).toEqual([
			{
				id: expect.any(String),
				sid: "sid-1",
				tokenName: "owner",
				phase: "done",
				tool: "blob:write",
				isError: false,
				args: { path: file, offset: 0, bytes: 5, method: "POST" },
			},
		]);
	});

	test("no offset on a non-empty file -> 409 file_exists {size} naming PUT and offset; file unchanged", async () => {
		await call("POST", "path=~/f", "abc");
		const res = await call("POST", "path=~/f", "defg");
		const file = join(dir, "home", "f");
		expect(res.status).toBe(409);
		const body = (await res.json()) as { code: string; size: number; error: string };
		expect(body).toMatchObject({ code: "file_exists", size: 3 });
		expect(body.error).toContain("PUT");
		expect(body.error).toContain("offset=3");
		expect(readFileSync(file, "utf8")).toBe("abc");
		// An empty file is written without an offset, as a missing one is.
		writeFileSync(join(dir, "home", "e"), "");
		expect((await call("POST", "path=~/e", "x")).status).toBe(200);
	});

	test("offset appends: sha256 is the whole file, request_sha256 this request's bytes", async () => {
		await call("POST", "path=~/f", "abc");
		const res = await call("POST", "path=~/f&offset=3", "defg");
		const file = join(dir, "home", "f");
		expect(await res.json()).toEqual({
			path: file,
			offset: 3,
			written: 4,
			size: 7,
			sha256: sha("abcdefg"),
			request_sha256: sha("defg"),
		});
		expect(readFileSync(file, "utf8")).toBe("abcdefg");
	});

	test("offset equal to the size -> 200; any other -> 409 offset_mismatch, file untouched", async () => {
		await call("POST", "path=f", "abc");
		for (const off of [0, 2, 4]) {
			const res = await call("POST", `path=f&offset=${off}`, "zzz");
			expect(res.status).toBe(409);
			expect(await res.json()).toMatchObject({ code: "offset_mismatch" });
		}
		expect(readFileSync(join(dir, "cwd", "f"), "utf8")).toBe("abc");
		expect((await call("POST", "path=f&offset=3", "d")).status).toBe(200);
		expect(readFileSync(join(dir, "cwd", "f"), "utf8")).toBe("abcd");
	});

	test("offset past the end of a missing file -> 409, nothing created", async () => {
		const res = await call("POST", "path=new/x&offset=5", "abc");
		expect(res.status).toBe(409);
		expect(existsSync(join(dir, "cwd", "new"))).toBe(false);
	});

	test("empty body, with or without Content-Length -> 400 empty_body, nothing created", async () => {
		for (const body of [null, "", new ReadableStream({ start: c => c.close() })]) {
			const res = await call("POST", "path=empty/x", body);
			expect(res.status).toBe(400);
			expect(await res.json()).toMatchObject({ code: "empty_body" });
		}
		expect(existsSync(join(dir, "cwd", "empty"))).toBe(false);
		// One refusal record per request, each with 0 bytes moved.
		expect(audits.map(a => ({ tool: a.tool, isError: a.isError, args: a.args }))).toEqual(
			Array(3).fill({
				tool: "blob:write",
				isError: true,
				args: { path: join(dir, "cwd", "empty", "x"), offset: null, bytes: 0, method: "POST" },
			}),
		);
	});

	test("a second upload to a path in flight -> 409 upload_in_progress; the lock is released after", async () => {
		const { body, push } = pushBody();
		push.enqueue(new TextEncoder().encode("first"));
		const first = call("POST", "path=locked", body);
		await landed("locked", "first");
		const second = await call("PUT", "path=locked", "second");
		expect(second.status).toBe(409);
		expect(await second.json()).toMatchObject({ code: "upload_in_progress" });
		push.close();
		expect((await first).status).toBe(200);
		expect((await call("POST", "path=locked&offset=5", "+")).status).toBe(200);
		expect(readFileSync(join(dir, "cwd", "locked"), "utf8")).toBe("first+");
	});

	test("issue 20 item 4: a token at its share of uploads -> 503 too_many_uploads; another token still uploads", async () => {
		const shared = new TokenHoldings({ ...NO_SLOTS, uploads: 4 }, () => 2);
		const as = (tokenName: string, path: string, body: ReadableStream<Uint8Array> | string) =>
			route.handle(
				new Request(`http://127.0.0.1:9/blob?path=${path}`, { method: "POST", body }),
				routeCtx({ tokenName }, shared),
			);
		const one = pushBody();
		const two = pushBody();
		const first = as("a", "a1", one.body);
		const second = as("a", "a2", two.body);
		const third = await as("a", "a3", "x");
		expect(third.status).toBe(503);
		expect(await third.json()).toMatchObject({
			code: "too_many_uploads",
			error: expect.stringContaining("this token's 2 uploads"),
		});
		const other = await as("b", "b1", "y");
		expect(other.status).toBe(200);
		for (const p of [one, two]) {
			p.push.enqueue(new TextEncoder().encode("z"));
			p.push.close();
		}
		expect((await first).status).toBe(200);
		expect((await second).status).toBe(200);
		// The share frees with the uploads.
		expect((await as("a", "a4", "w")).status).toBe(200);
	});

	test("issue 30 item 4: a token at its share of downloads -> 503 too_many_downloads; another token still downloads", async () => {
		const shared = new TokenHoldings({ ...NO_SLOTS, downloads: 4 }, () => 2);
		const size = 2 * 1024 * 1024;
		writeFileSync(join(dir, "cwd", "d"), "x".repeat(size));
		const as = (tokenName: string) =>
			route.handle(new Request("http://127.0.0.1:9/blob?path=d"), routeCtx({ tokenName }, shared));
		// Bodies not read yet: each holds its descriptor and its slot.
		const held = [await as("a"), await as("a")];
		const third = await as("a");
		expect(third.status).toBe(503);
		expect(await third.json()).toMatchObject({
			code: "too_many_downloads",
			error: expect.stringContaining("this token's 2 downloads"),
		});
		const other = await as("b");
		expect(other.status).toBe(200);
		expect((await other.text()).length).toBe(size);
		// The share frees as the bodies are read.
		for (const r of held) expect((await r.text()).length).toBe(size);
		expect((await as("a")).status).toBe(200);
	});

	test("a body that errors mid-stream -> what arrived stays, audit says client disconnected, lock released", async () => {
		const { body, push } = pushBody();
		push.enqueue(new TextEncoder().encode("partial"));
		const pending = call("POST", "path=cut", body);
		await landed("cut", "partial");
		push.error(new Error("socket closed"));
		const res = await pending;
		expect(res.status).toBe(400);
		expect(await res.json()).toMatchObject({ code: "client_disconnected" });
		expect(readFileSync(join(dir, "cwd", "cut"), "utf8")).toBe("partial");
		expect(audits.at(-1)).toMatchObject({
			tool: "blob:write",
			isError: true,
			error: "client disconnected",
			args: { offset: 0, bytes: 7 },
		});
		expect((await call("POST", "path=cut&offset=7", "!")).status).toBe(200);
	});

	test("issue 41.8: HEAD through links tells the offset of the file a cut PUT staged, reached as the kernel reaches it", async () => {
		// `a` is a linked directory and `a/l` says `../f`: the kernel takes `..` from x/y, not from `a`'s parent.
		const cwd = join(dir, "cwd");
		mkdirSync(join(cwd, "x", "y"), { recursive: true });
		symlinkSync(join("x", "y"), join(cwd, "a"));
		symlinkSync(join("..", "f"), join(cwd, "x", "y", "l"));
		const { body, push } = pushBody();
		push.enqueue(new TextEncoder().encode("partial"));
		const pending = call("PUT", "path=a/l", body);
		await waitFor("a staging file in x to hold the pushed bytes", () =>
			readdirSync(join(cwd, "x")).some(n => n.startsWith(".a2a-staging-") && statSync(join(cwd, "x", n)).size === 7),
		);
		push.error(new Error("socket closed"));
		expect((await pending).status).toBe(400);
		const staged = readdirSync(join(cwd, "x")).filter(n => n.startsWith(".a2a-staging-"));
		expect(staged).toHaveLength(1);
		const head = await call("HEAD", "path=a/l");
		expect([head.status, head.headers.get("upload-offset")]).toEqual([404, "7"]);
	});

	test("a PUT whose secret ended while its body came in replaces nothing: the identity is checked after the body", async () => {
		writeFileSync(join(dir, "cwd", "kept"), "old");
		const revoked = new AbortController();
		revoked.abort();
		const put = (path: string) =>
			route.handle(
				new Request(`http://127.0.0.1:9/blob?path=${path}`, { method: "PUT", body: "new bytes" }),
				routeCtx({ ended: revoked.signal }),
			);
		const res = await put("kept");
		expect(res.status).toBe(401);
		expect(await res.json()).toMatchObject({ code: "invalid_token" });
		expect(readFileSync(join(dir, "cwd", "kept"), "utf8")).toBe("old");
		expect(audits.at(-1)).toMatchObject({ tool: "blob:write", isError: true, error: "token revoked or rotated" });
		expect((await put("fresh")).status).toBe(401);
		expect(existsSync(join(dir, "cwd", "fresh"))).toBe(false);
	});

	test("a PUT whose secret ends mid-body -> 400 client_disconnected, the old file kept (the kit's watch, issue 41)", async () => {
		writeFileSync(join(dir, "cwd", "kept"), "old");
		const holdings = new TokenHoldings({ ...NO_SLOTS, uploads: 4 }, () => 1);
		const { body, push } = pushBody();
		const put = route.handle(
			new Request("http://127.0.0.1:9/blob?path=kept", { method: "PUT", body }),
			routeCtx({}, holdings),
		);
		push.enqueue(new TextEncoder().encode("new "));
		const staged = () => readdirSync(join(dir, "cwd")).filter(n => n.startsWith(".a2a-staging-"));
		await waitFor("the first bytes staged", () => staged().some(n => statSync(join(dir, "cwd", n)).size > 0));
		holdings.endToken("owner", "revoked");
		push.enqueue(new TextEncoder().encode("bytes"));
		push.close();
		const res = await put;
		expect(res.status).toBe(400);
		// Stopped by the watch when the body was in, not later by the digest's own guard ("… while the upload was hashed").
		expect(await res.json()).toMatchObject({
			code: "client_disconnected",
			error: expect.stringContaining("stopped: token revoked or rotated; 9 bytes are staged"),
		});
		expect(readFileSync(join(dir, "cwd", "kept"), "utf8")).toBe("old");
	});

	test("POST or GET on a directory -> 400 is_directory", async () => {
		for (const m of ["POST", "GET", "HEAD"]) {
			const res = await call(m, "path=~", m === "POST" ? "x" : null);
			expect(res.status).toBe(400);
			if (m !== "HEAD") expect(await res.json()).toMatchObject({ code: "is_directory" });
		}
	});

	test("upload to a device (/dev/full, /dev/null) or a FIFO -> 400 not_regular_file, nothing written, audited", async () => {
		const fifo = join(dir, "cwd", "fifo");
		Bun.spawnSync(["mkfifo", fifo]);
		for (const path of ["/dev/full", "/dev/null", fifo]) {
			const res = await call("POST", `path=${encodeURIComponent(path)}`, "x".repeat(1000));
			expect([path, res.status]).toEqual([path, 400]);
			const body = (await res.json()) as { error: string; code: string };
			expect(body.code).toBe("not_regular_file");
			expect(body.error).toContain(path);
			expect(audits.at(-1)).toMatchObject({ isError: true, args: { path, bytes: 0 } });
		}
	});

	test("upload to a procfs or sysfs file -> 400 not_regular_file", async () => {
		for (const path of ["/proc/self/comm", "/sys/kernel/mm/transparent_hugepage/enabled"]) {
			for (const method of ["POST", "PUT"]) {
				const res = await call(method, `path=${encodeURIComponent(path)}`, "x");
				expect([path, method, res.status]).toEqual([path, method, 400]);
				expect(await res.json()).toMatchObject({ code: "not_regular_file" });
			}
		}
	});

	test("a parent that is a file -> 500 write_failed, 0 bytes landed", async () => {
		writeFileSync(join(dir, "cwd", "plain"), "x");
		const res = await call("POST", "path=plain/child", "abc");
		expect(res.status).toBe(500);
		const body = (await res.json()) as { error: string; code: string };
		expect(body).toMatchObject({ code: "write_failed" });
		expect(body.error).toContain("0 bytes landed");
	});

	test("GET whole file, ranges, HEAD; audit records offset and bytes", async () => {
		const data = new Uint8Array(100).map((_, i) => i);
		writeFileSync(join(dir, "cwd", "d"), data);
		const full = await call("GET", "path=d");
		expect(full.status).toBe(200);
		expect(full.headers.get("content-length")).toBe("100");
		expect(full.headers.get("accept-ranges")).toBe("bytes");
		expect(new Uint8Array(await full.arrayBuffer())).toEqual(data);
		const part = await call("GET", "path=d", null, { range: "bytes=-10" });
		expect(part.status).toBe(206);
		expect(part.headers.get("content-range")).toBe("bytes 90-99/100");
		expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(90));
		const head = await call("HEAD", "path=d");
		expect(head.status).toBe(200);
		expect(head.headers.get("content-length")).toBe("100");
		const bad = await call("GET", "path=d", null, { range: "bytes=100-" });
		expect(bad.status).toBe(416);
		expect(bad.headers.get("content-range")).toBe("bytes */100");
		expect(await bad.json()).toMatchObject({ code: "range_not_satisfiable" });
		expect(audits.map(a => [a.tool, a.isError, a.args])).toEqual([
			["blob:read", false, { path: join(dir, "cwd", "d"), offset: 0, bytes: 100 }],
			["blob:read", false, { path: join(dir, "cwd", "d"), offset: 90, bytes: 10 }],
			["blob:read", false, { path: join(dir, "cwd", "d"), offset: 0, bytes: 0 }],
			["blob:read", true, { path: join(dir, "cwd", "d"), offset: null, bytes: 0 }],
		]);
	});

	test("issue 30: every answer carries a strong ETag; a Range under a stale If-Range gets the whole new file", async () => {
		const file = join(dir, "cwd", "v");
		writeFileSync(file, "first version, 32 bytes long....");
		const head = await call("HEAD", "path=v");
		const etag = head.headers.get("etag") as string;
		expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
		expect((await call("GET", "path=v")).headers.get("etag")).toBe(etag);
		const part = await call("GET", "path=v", null, { range: "bytes=6-", "if-range": etag });
		expect(part.status).toBe(206);
		expect(part.headers.get("etag")).toBe(etag);
		expect(await part.text()).toBe("version, 32 bytes long....");
		// Replaced meanwhile (same size, same second): the old tag no longer matches, so no mix of two files.
		writeFileSync(file, "SECOND VERSION, 32 BYTES LONG!!!");
		const resumed = await call("GET", "path=v", null, { range: "bytes=6-", "if-range": etag });
		expect(resumed.status).toBe(200);
		expect(resumed.headers.get("content-range")).toBeNull();
		expect(await resumed.text()).toBe("SECOND VERSION, 32 BYTES LONG!!!");
		expect(resumed.headers.get("etag")).not.toBe(etag);
		// A date, a weak tag or junk never matches either; an unsatisfiable range under it is not a 416.
		for (const ifRange of ["Wed, 21 Oct 2015 07:28:00 GMT", `W/${etag}`, "junk"]) {
			const r = await call("GET", "path=v", null, { range: "bytes=999-", "if-range": ifRange });
			expect([ifRange, r.status]).toEqual([ifRange, 200]);
		}
	});

	test("GET a missing file -> 404 not_found; a device -> 400 not_regular_file", async () => {
		const missing = await call("GET", "path=nope");
		expect(missing.status).toBe(404);
		expect(await missing.json()).toMatchObject({ code: "not_found" });
		const dev = await call("GET", "path=/dev/zero");
		expect(dev.status).toBe(400);
		expect(await dev.json()).toMatchObject({ code: "not_regular_file" });
	});

	test("bad query -> 400 with its code, audited with the raw path", async () => {
		const res = await call("POST", "path=a%00b", "x");
		expect(res.status).toBe(400);
		expect(await res.json()).toEqual({ error: "path contains a NUL byte", code: "bad_path" });
		expect(audits.at(-1)).toMatchObject({ isError: true, args: { path: "a\u0000b", offset: null, bytes: 0 } });
	});
});
