/**
 * The ceiling for bench/blob.ts: a Bun server with no logic (no auth, no checks, no hash, no audit)
 * that streams a request body to a file and serves a file back. Run as its own process, like the host.
 * Prints its port on stdout. Upload modes: `/sync` writes each chunk with `fs.writeSync`, `/bunwrite`
 * hands the whole request to `Bun.write`; the benchmark reports the faster one as the ceiling.
 * `GET /hashsend` streams a file while it hashes it (SHA-256 of every chunk it sends), the reference for
 * a download with `Want-Repr-Digest`.
 */
import { closeSync, openSync, readSync, writeSync } from "node:fs";

const CHUNK = 1024 * 1024;

function hashingStream(path: string): ReadableStream<Uint8Array> {
	const fd = openSync(path, "r");
	const hash = new Bun.CryptoHasher("sha256");
	return new ReadableStream<Uint8Array>({
		pull(c) {
			const buf = new Uint8Array(CHUNK);
			const n = readSync(fd, buf, 0, CHUNK, null);
			if (n === 0) {
				hash.digest("hex");
				closeSync(fd);
				c.close();
				return;
			}
			hash.update(buf.subarray(0, n));
			c.enqueue(buf.subarray(0, n));
		},
		cancel: () => closeSync(fd),
	});
}

const server = Bun.serve({
	hostname: "127.0.0.1",
	port: 0,
	maxRequestBodySize: Number.MAX_SAFE_INTEGER,
	async fetch(req, srv) {
		srv.timeout(req, 0);
		const url = new URL(req.url);
		const path = url.searchParams.get("path") ?? "";
		if (req.method === "GET" && url.pathname === "/hashsend") return new Response(hashingStream(path));
		if (req.method === "GET") return new Response(Bun.file(path));
		if (url.pathname === "/bunwrite") return new Response(String(await Bun.write(path, req)));
		const fd = openSync(path, "a");
		let n = 0;
		try {
			for await (const chunk of req.body ?? []) {
				writeSync(fd, chunk);
				n += chunk.byteLength;
			}
		} finally {
			closeSync(fd);
		}
		return new Response(String(n));
	},
});
process.stdout.write(`${server.port}\n`);
