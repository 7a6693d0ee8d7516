/**
 * `PUT /blob` (atomic replace, resume), RFC 9530 digests and the bridge's own files, against a real
 * host (contract §7, issue 21). Every claim is checked on disk too: the target's bytes and mode, the
 * staging file's presence, the audit line. Hostile cases: readers during a replace, a POST holding the
 * file, a full disk (a 4 MiB tmpfs), cut bodies, wrong digests, links, names switched during downloads.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
	chmodSync,
	chownSync,
	existsSync,
	linkSync,
	lstatSync,
	readdirSync,
	readFileSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { feed, rawUpload } from "../../helpers/raw-upload.ts";
import { runCommand } from "../../helpers/run.ts";
import { mountTmpfs } from "../../helpers/tmpfs.ts";
import { waitFor } from "../../helpers/wait.ts";

const MIB = 1024 * 1024;
const sha = (b: Uint8Array | string): string => createHash("sha256").update(b).digest("hex");
const sf = (b: Uint8Array | string): string => `sha-256=:${createHash("sha256").update(b).digest("base64")}:`;
const random = (size: number): Uint8Array => {
	const out = new Uint8Array(size);
	for (let off = 0; off < size; off += 65536) crypto.getRandomValues(out.subarray(off, Math.min(size, off + 65536)));
	return out;
};
const staged = (dir: string): string[] => readdirSync(dir).filter(n => n.startsWith(".a2a-staging-"));

describe("/blob PUT, digests and own files (real host)", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	const url = (path: string, extra = "") => new URL(`/blob?path=${encodeURIComponent(path)}${extra}`, host.url);
	const send = (method: string, path: string, body: Uint8Array | string | null, headers: Record<string, string> = {}) =>
		fetch(url(path), {
			method,
			headers: { authorization: `Bearer ${host.token}`, ...headers },
			body,
			signal: AbortSignal.timeout(30_000),
		});
	const sendAt = (method: string, path: string, extra: string, body: Uint8Array | string, h = {}) =>
		fetch(url(path, extra), {
			method,
			headers: { authorization: `Bearer ${host.token}`, ...h },
			body,
			signal: AbortSignal.timeout(30_000),
		});
	const writes = (path: string) =>
		auditRecords<{ tool: string; isError: boolean; error?: string; args: string }>(host, r => r.tool === "blob:write")
			.map(r => ({ ...r, a: JSON.parse(r.args) as { path: string; offset: number; bytes: number; method: string } }))
			.filter(r => r.a.path === path);

	test("PUT replaces whole: reply names both digests, mode kept, no staging left, audited as PUT; an empty PUT is a zero-byte file", async () => {
		const file = join(host.home, "fw.bin");
		writeFileSync(file, "version one, longer than the next");
		chmodSync(file, 0o640);
		// The host runs as root here: another user's file keeps its owner and group.
		const asRoot = process.getuid?.() === 0;
		if (asRoot) chownSync(file, 1234, 4321);
		const v2 = random(3 * MIB + 5);
		const res = await send("PUT", file, v2);
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({
			path: file,
			offset: 0,
			written: v2.byteLength,
			size: v2.byteLength,
			sha256: sha(v2),
			request_sha256: sha(v2),
		});
		expect(sha(readFileSync(file))).toBe(sha(v2));
		expect(statSync(file).mode & 0o777).toBe(0o640);
		if (asRoot) expect([statSync(file).uid, statSync(file).gid]).toEqual([1234, 4321]);
		expect(staged(host.home)).toEqual([]);
		expect(writes(file).at(-1)).toMatchObject({
			isError: false,
			a: { method: "PUT", offset: 0, bytes: v2.byteLength },
		});
		// Again, as a user re-running the same line would: still exactly the new file.
		expect((await send("PUT", file, v2)).status).toBe(200);
		expect(sha(readFileSync(file))).toBe(sha(v2));
		const empty = await send("PUT", file, "");
		expect(await empty.json()).toMatchObject({ written: 0, size: 0, sha256: sha("") });
		expect(statSync(file).size).toBe(0);
		// A new file: parents created, the usual mode (not the staging file's 0600).
		const fresh = join(host.home, "new", "dir", "f.txt");
		expect((await send("PUT", fresh, "hi")).status).toBe(200);
		expect(readFileSync(fresh, "utf8")).toBe("hi");
		expect(statSync(fresh).mode & 0o777).toBe(0o666 & ~0o022);
	}, 60_000);

	test("a reader during a PUT sees the old file whole, never a mix; after it, the new one", async () => {
		const file = join(host.home, "live.bin");
		const old = random(2 * MIB);
		const next = random(6 * MIB);
		writeFileSync(file, old);
		const { sock, reply } = await rawUpload(host, "PUT", `/blob?path=${encodeURIComponent(file)}`, next.byteLength);
		await feed(sock, next.subarray(0, 3 * MIB));
		await waitFor("the staging file", () => (staged(host.home).length > 0 ? true : undefined));
		for (let i = 0; i < 5; i++) {
			const down = await send("GET", file, null);
			expect(sha(new Uint8Array(await down.arrayBuffer()))).toBe(sha(old));
			expect(sha(readFileSync(file))).toBe(sha(old));
		}
		await feed(sock, next.subarray(3 * MIB));
		expect(await reply).toStartWith("HTTP/1.1 200");
		const down = await send("GET", file, null);
		expect(sha(new Uint8Array(await down.arrayBuffer()))).toBe(sha(next));
	}, 60_000);

	test("PUT while a POST holds the file -> 409 upload_in_progress; the POST completes, the file is its bytes", async () => {
		const file = join(host.home, "held.bin");
		const body = random(2 * MIB);
		const { sock, reply } = await rawUpload(host, "POST", `/blob?path=${encodeURIComponent(file)}`, body.byteLength);
		await feed(sock, body.subarray(0, MIB));
		await waitFor("the POST's first bytes", () => (existsSync(file) && statSync(file).size > 0 ? true : undefined));
		const put = await send("PUT", file, "intruder");
		expect(put.status).toBe(409);
		expect(await put.json()).toMatchObject({ code: "upload_in_progress" });
		await feed(sock, body.subarray(MIB));
		expect(await reply).toStartWith("HTTP/1.1 200");
		expect(sha(readFileSync(file))).toBe(sha(body));
		expect(staged(host.home)).toEqual([]);
	}, 60_000);

	test("disk full mid-PUT (a 4 MiB tmpfs) -> 500 write_failed; the file byte-identical, no staging file", async () => {
		// Fails with the reason when no tmpfs can be mounted: a full disk is the case under test.
		const disk = mountTmpfs(4096);
		const dir = disk.dir;
		try {
			const file = join(dir, "image.bin");
			const old = random(MIB);
			writeFileSync(file, old);
			const res = await send("PUT", file, random(8 * MIB));
			expect(res.status).toBe(500);
			const body = (await res.json()) as { code: string; error: string };
			expect(body.code).toBe("write_failed");
			expect(body.error).toContain("this upload did not change");
			expect(sha(readFileSync(file))).toBe(sha(old));
			expect(staged(dir)).toEqual([]);
		} finally {
			disk.unmount();
		}
	}, 60_000);

	test("a cut PUT keeps the file and its staged bytes; HEAD tells Upload-Offset; PUT offset=N finishes it with Repr-Digest", async () => {
		const file = join(host.home, "big.img");
		const old = "the old image";
		writeFileSync(file, old);
		const next = random(12 * MIB);
		const { sock } = await rawUpload(host, "PUT", `/blob?path=${encodeURIComponent(file)}`, next.byteLength);
		await feed(sock, next.subarray(0, 4 * MIB));
		await waitFor("the staging file", () => (staged(host.home).length > 0 ? true : undefined));
		sock.destroy();
		const cut = await waitFor("the cut's audit record", () => writes(file).find(r => r.isError));
		expect(cut.error).toBe("client disconnected");
		expect(readFileSync(file, "utf8")).toBe(old);
		const head = await send("HEAD", file, null);
		const at = Number(head.headers.get("upload-offset"));
		expect(head.headers.get("content-length")).toBe(String(old.length));
		expect(at).toBe(cut.a.bytes);
		expect(at).toBeGreaterThan(0);
		expect(sha(readFileSync(join(host.home, staged(host.home)[0] as string)))).toBe(sha(next.subarray(0, at)));
		expect(statSync(join(host.home, staged(host.home)[0] as string)).mode & 0o777).toBe(0o600);
		// A wrong offset: 409 naming the staged size; nothing moves.
		const wrong = await sendAt("PUT", file, `&offset=${at + 1}`, next.subarray(at + 1));
		expect(wrong.status).toBe(409);
		expect(wrong.headers.get("upload-offset")).toBe(String(at));
		expect(await wrong.json()).toMatchObject({ code: "offset_mismatch", staged: at });
		const done = await sendAt("PUT", file, `&offset=${at}`, next.subarray(at), { "repr-digest": sf(next) });
		expect(done.status).toBe(200);
		expect(await done.json()).toMatchObject({
			offset: at,
			written: next.byteLength - at,
			size: next.byteLength,
			sha256: sha(next),
			request_sha256: sha(next.subarray(at)),
		});
		expect(sha(readFileSync(file))).toBe(sha(next));
		expect(staged(host.home)).toEqual([]);
		expect((await send("HEAD", file, null)).headers.get("upload-offset")).toBeNull();
	}, 60_000);

	test("digest mismatches: PUT leaves the file untouched, POST cuts back to its size before; malformed or unsupported -> 400 bad_digest", async () => {
		const file = join(host.home, "checked.bin");
		writeFileSync(file, "kept");
		const body = random(MIB);
		const wrongs: Array<Record<string, string>> = [
			{ "repr-digest": sf("something else") },
			{ "content-digest": sf("something else") },
		];
		for (const h of wrongs) {
			const res = await send("PUT", file, body, h);
			expect(res.status).toBe(400);
			const refused = (await res.json()) as Record<string, unknown>;
			expect(refused).toMatchObject({
				code: "digest_mismatch",
				rejected_sha256: sha(body),
				rejected_request_sha256: sha(body),
			});
			// Issue 31 item 5: nothing in a refusal reads as the landed file's digest.
			expect(Object.keys(refused).filter(k => k === "sha256" || k === "request_sha256")).toEqual([]);
			expect(readFileSync(file, "utf8")).toBe("kept");
			expect(staged(host.home)).toEqual([]);
		}
		const append = await sendAt("POST", file, "&offset=4", "more", { "repr-digest": sf("keptmorX") });
		expect(append.status).toBe(400);
		const appendBody = (await append.json()) as Record<string, unknown>;
		expect(appendBody).toMatchObject({ code: "digest_mismatch", rejected_sha256: sha("keptmore") });
		expect(appendBody.sha256).toBeUndefined();
		expect(readFileSync(file, "utf8")).toBe("kept");
		const part = await sendAt("POST", file, "&offset=4", "more", { "content-digest": sf("mor") });
		expect(part.status).toBe(400);
		expect(readFileSync(file, "utf8")).toBe("kept");
		const created = join(host.home, "never-kept.bin");
		expect((await send("POST", created, "x", { "content-digest": sf("y") })).status).toBe(400);
		expect(existsSync(created)).toBe(false);
		// Both right, in one field list with an algorithm this bridge skips.
		const ok = await sendAt("POST", file, "&offset=4", "more", {
			"repr-digest": `sha-512=:AAAA:, ${sf("keptmore")}`,
			"content-digest": sf("more"),
		});
		expect(await ok.json()).toMatchObject({ sha256: sha("keptmore"), request_sha256: sha("more") });
		for (const bad of ["sha-256=abc", "sha-256=:AAAA:", "md5=:AAAA:", "sha-256=:%%%:", ",", `${sf("x")},`]) {
			const res = await send("PUT", file, "zz", { "repr-digest": bad });
			expect([bad, res.status]).toEqual([bad, 400]);
			expect(await res.json()).toMatchObject({ code: "bad_digest" });
		}
		expect(readFileSync(file, "utf8")).toBe("keptmore");
	}, 60_000);

	test("GET/HEAD with Want-Repr-Digest -> Repr-Digest of the whole file (also on a range); HEAD sends no body", async () => {
		const file = join(host.home, "want.bin");
		const data = random(9 * MIB + 3);
		writeFileSync(file, data);
		const get = await send("GET", file, null, { "want-repr-digest": "sha-256=5, sha-512=3" });
		expect(get.headers.get("repr-digest")).toBe(sf(data));
		expect(sha(new Uint8Array(await get.arrayBuffer()))).toBe(sha(data));
		const head = await send("HEAD", file, null, { "want-repr-digest": "sha-256=1" });
		expect(head.headers.get("repr-digest")).toBe(sf(data));
		expect(head.headers.get("content-length")).toBe(String(data.byteLength));
		expect((await head.arrayBuffer()).byteLength).toBe(0);
		const range = await send("GET", file, null, { "want-repr-digest": "sha-256=1", range: "bytes=0-9" });
		expect(range.status).toBe(206);
		expect(range.headers.get("repr-digest")).toBe(sf(data));
		expect(range.headers.get("content-length")).toBe("10");
		expect((await send("GET", file, null, { "want-repr-digest": "sha-256=0" })).headers.get("repr-digest")).toBeNull();
		expect((await send("GET", file, null)).headers.get("repr-digest")).toBeNull();
		// Remembered digests never outlive a change: rewritten in place (same inode, same size) at once after a
		// PUT and after a GET that hashed, the next answer is the new bytes' digest.
		const same = join(host.home, "same-size.bin");
		expect((await send("PUT", same, "aaaa")).status).toBe(200);
		writeFileSync(same, "bbbb");
		const afterPut = await send("HEAD", same, null, { "want-repr-digest": "sha-256=1" });
		expect(afterPut.headers.get("repr-digest")).toBe(sf("bbbb"));
		writeFileSync(same, "cccc");
		const afterGet = await send("HEAD", same, null, { "want-repr-digest": "sha-256=1" });
		expect(afterGet.headers.get("repr-digest")).toBe(sf("cccc"));
		const bad = await send("GET", file, null, { "want-repr-digest": "sha-256=high" });
		expect(bad.status).toBe(400);
		expect(await bad.json()).toMatchObject({ code: "bad_digest" });
	}, 60_000);

	test("PUT through a symlink replaces the file it points to; the link stays a link; the target's mode is kept", async () => {
		const real = join(host.home, "real-target.conf");
		const link = join(host.home, "link.conf");
		writeFileSync(real, "old");
		chmodSync(real, 0o604);
		symlinkSync(real, link);
		const res = await send("PUT", link, "new contents");
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ path: link, target: real, size: 12 });
		expect(lstatSync(link).isSymbolicLink()).toBe(true);
		expect(readFileSync(real, "utf8")).toBe("new contents");
		expect(statSync(real).mode & 0o777).toBe(0o604);
		// A dangling link: the file it names is created, the link stays.
		const dangling = join(host.home, "dangling.link");
		symlinkSync(join(host.home, "made-through-link.txt"), dangling);
		expect((await send("PUT", dangling, "via link")).status).toBe(200);
		expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
		expect(readFileSync(join(host.home, "made-through-link.txt"), "utf8")).toBe("via link");
	}, 60_000);

	test("a name switched between two files during downloads: every answer is one whole file, its Content-Length its size", async () => {
		// Small files, many downloads: each is a chance for the switch to land between the check and the send.
		const a = random(512 * 1024);
		const b = random(96 * 1024 + 7);
		const fa = join(host.home, "switch-a.bin");
		const fb = join(host.home, "switch-b.bin");
		const name = join(host.home, "switching.bin");
		writeFileSync(fa, a);
		writeFileSync(fb, b);
		symlinkSync(fa, name);
		const flipper = Bun.spawn(
			[
				process.execPath,
				"-e",
				`const fs=require("fs");const [n,x,y]=process.argv.slice(1);for(let i=0;;i++){fs.symlinkSync(i%2?x:y,n+".t");fs.renameSync(n+".t",n)}`,
				name,
				fa,
				fb,
			],
			{ stdout: "ignore", stderr: "ignore" },
		);
		const wrong: string[] = [];
		const seen = { a: 0, b: 0 };
		try {
			for (let i = 0; i < 400; i++) {
				try {
					const res = await send("GET", name, null);
					const got = new Uint8Array(await res.arrayBuffer());
					const digest = sha(got);
					const length = Number(res.headers.get("content-length"));
					if (res.status !== 200 || length !== got.byteLength || (digest !== sha(a) && digest !== sha(b))) {
						wrong.push(`#${i}: ${res.status}, Content-Length ${length}, ${got.byteLength} bytes, one file: no`);
					} else seen[digest === sha(a) ? "a" : "b"]++;
				} catch (err) {
					wrong.push(`#${i}: ${String(err)}`);
				}
			}
		} finally {
			flipper.kill();
			await flipper.exited;
		}
		expect(wrong).toEqual([]);
		// The switch really happened while the downloads ran.
		expect(seen.a).toBeGreaterThan(0);
		expect(seen.b).toBeGreaterThan(0);
	}, 120_000);

	test("a file that shrinks mid-download: the body ends short with an error, never padded to Content-Length", async () => {
		const file = join(host.home, "shrinks.bin");
		writeFileSync(file, random(64 * MIB));
		const res = await send("GET", file, null);
		expect(res.headers.get("content-length")).toBe(String(64 * MIB));
		const reader = (res.body as ReadableStream<Uint8Array>).getReader();
		let got = (await reader.read()).value?.byteLength ?? 0;
		await runCommand(["truncate", "-s", String(MIB), file]);
		const outcome = await (async () => {
			try {
				for (;;) {
					const { done, value } = await reader.read();
					if (done) return "ended";
					got += value.byteLength;
				}
			} catch {
				return "error";
			}
		})();
		// The socket buffers may hold up to a few MiB sent before the cut; the rest never comes.
		expect(got).toBeLessThan(64 * MIB);
		expect(outcome).toBe("error");
	}, 60_000);

	test("the bridge's own files -> 403 own_file for PUT and POST, by any name (link, hard link, a generation not yet made)", async () => {
		const config = readFileSync(host.configPath, "utf8");
		const runtime = host.configPath.replace(/\.json$/, ".runtime.json");
		const alias = join(host.home, "config-alias.json");
		symlinkSync(host.configPath, alias);
		const hard = join(host.home, "config-hard.json");
		linkSync(host.configPath, hard);
		// A link to a generation that does not exist yet: following it would create that generation.
		const toLog2 = join(host.home, "log-2-alias");
		symlinkSync(`${host.auditPath}.2`, toLog2);
		const targets = [
			host.configPath,
			alias,
			hard,
			host.auditPath,
			`${host.auditPath}.1`,
			`${host.auditPath}.3`,
			toLog2,
			runtime,
		];
		for (const path of targets) {
			for (const method of ["PUT", "POST"]) {
				const res = await send(method, path, "junk\n");
				expect([path, method, res.status]).toEqual([path, method, 403]);
				expect(await res.json()).toMatchObject({ code: "own_file" });
				expect(await (await sendAt(method, path, "&offset=0", "junk")).status).toBe(403);
			}
		}
		expect(readFileSync(host.configPath, "utf8")).toBe(config);
		expect(existsSync(`${host.auditPath}.3`)).toBe(false);
		expect(existsSync(`${host.auditPath}.2`)).toBe(false);
		expect(existsSync(`${host.auditPath}.2`)).toBe(false);
		expect(readFileSync(host.auditPath, "utf8")).not.toContain("junk");
		// Reading them stays possible: the rule is about writes.
		expect((await send("GET", host.configPath, null)).status).toBe(200);
	}, 60_000);
});
