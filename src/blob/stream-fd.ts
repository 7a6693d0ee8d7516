/** A descriptor streamed through JS, for what Bun cannot send natively (pseudo-files, no `/proc`). */
import { closeSync, readSync } from "node:fs";

const READ_BYTES = 256 * 1024;

/**
 * Reads `fd` from `start` to `end` (null: to EOF or the first read that would block) and closes it;
 * `done` gets the byte count. A file that ends before `end` errors the stream: the reader sees a short
 * body, never a padded one; so does a slot ended by revocation (`ended`) at the next read.
 */
export function streamFd(
	fd: number,
	start: number,
	end: number | null,
	done: (bytes: number) => void,
	ended?: AbortSignal,
): ReadableStream<Uint8Array> {
	let pos = start;
	let open = true;
	const finish = () => {
		if (!open) return;
		open = false;
		closeSync(fd);
		done(pos - start);
	};
	return new ReadableStream<Uint8Array>({
		pull(c) {
			if (ended?.aborted) {
				finish();
				return c.error(new Error("the token was revoked or rotated"));
			}
			const want = end === null ? READ_BYTES : Math.min(READ_BYTES, end - pos);
			const buf = new Uint8Array(want);
			let n = 0;
			try {
				n = readSync(fd, buf, 0, want, end === null ? null : pos);
			} catch {
				// EAGAIN (nothing more without waiting) or a read error: end what was sent.
			}
			if (n > 0) {
				pos += n;
				c.enqueue(buf.subarray(0, n));
				if (end === null || pos < end) return;
			}
			finish();
			if (end !== null && pos < end) c.error(new Error(`the file ended at ${pos} bytes, before ${end}`));
			else c.close();
		},
		cancel: finish,
	});
}
