/**
 * `GET`/`HEAD /blob`: a regular file streamed back whole or by one byte range. The target is opened
 * without blocking and checked on its descriptor (blob/target.ts). Kernel pseudo-files report a
 * made-up size, so they are streamed to EOF with no `Content-Length` and no ranges. The idle timer
 * stays on: Bun restarts it with every write, so it cuts only a reader that takes nothing for 30 s.
 */
import { closeSync, readSync } from "node:fs";
import type { Ctx } from "./context.ts";
import { parseRange } from "./parse.ts";
import { openTarget } from "./target.ts";

const PSEUDO_READ_BYTES = 64 * 1024;

export function download(req: Request, path: string, { note, refuse }: Ctx): Response {
	const opened = openTarget(path, "read");
	if (!opened.ok) return refuse(path, null, opened.code, opened.message);
	const { fd, st, pseudo } = opened;
	const head = req.method === "HEAD";
	if (pseudo !== null) {
		if (head) {
			closeSync(fd);
			note(path, 0, 0);
			// Chunked, as GET would answer: no Content-Length (Bun would otherwise claim 0).
			const headers = { "content-type": "application/octet-stream", "transfer-encoding": "chunked" };
			return new Response(null, { status: 200, headers });
		}
		const body = streamToEof(fd, bytes => note(path, 0, bytes));
		return new Response(body, { status: 200, headers: { "content-type": "application/octet-stream" } });
	}
	closeSync(fd);
	const size = st.size;
	const range = parseRange(req.headers.get("range"), size);
	if (!range.ok) return refuse(path, null, range.code, range.message, { "content-range": `bytes */${size}` });
	const { start, end } = range.value ?? { start: 0, end: size - 1 };
	const length = end - start + 1;
	const headers: Record<string, string> = {
		"content-type": "application/octet-stream",
		"content-length": String(length),
		"accept-ranges": "bytes",
	};
	if (range.value) headers["content-range"] = `bytes ${start}-${end}/${size}`;
	note(path, start, head ? 0 : length);
	if (head || length === 0) return new Response(null, { status: range.value ? 206 : 200, headers });
	// Slicing pins the length to the size seen above even if the file grows while it streams.
	const body = Bun.file(path).slice(start, end + 1, "application/octet-stream");
	return new Response(body, { status: range.value ? 206 : 200, headers });
}

/** Reads `fd` to EOF (or to the first read that would block) and closes it; `done` gets the byte count. */
function streamToEof(fd: number, done: (bytes: number) => void): ReadableStream<Uint8Array> {
	let total = 0;
	let open = true;
	const finish = () => {
		if (!open) return;
		open = false;
		closeSync(fd);
		done(total);
	};
	return new ReadableStream<Uint8Array>({
		pull(c) {
			const buf = new Uint8Array(PSEUDO_READ_BYTES);
			let n = 0;
			try {
				n = readSync(fd, buf, 0, buf.byteLength, null);
			} catch {
				// EAGAIN (nothing more without waiting) or a read error: end what was sent.
			}
			if (n > 0) {
				total += n;
				c.enqueue(buf.subarray(0, n));
				return;
			}
			finish();
			c.close();
		},
		cancel: finish,
	});
}
