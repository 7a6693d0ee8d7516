/**
 * `GET`/`HEAD /blob`: a regular file streamed back whole or by one byte range, from the descriptor whose
 * type and size were checked (blob/target.ts): the path is never opened twice, so a name switched
 * meanwhile cannot mix two files. Bun sends it natively through `/proc/self/fd/N` (the open file itself,
 * not its name; Bun mis-sizes a slice of a bare descriptor), held open until Bun is done, with the
 * `Content-Length` checked; a file that shrinks under it ends the connection short rather than pad. Kernel pseudo-files report a
 * made-up size, so they are streamed to EOF with no `Content-Length` and no ranges. `Want-Repr-Digest:
 * sha-256=…` adds `Repr-Digest` of the whole file, hashed before the headers go out (blob/hash.ts). Each
 * answer carries a strong `ETag`; a `Range` with an `If-Range` that is not it gets the whole file.
 */
import { closeSync, existsSync } from "node:fs";
import { reachedPath } from "../config/paths.ts";
import type { Connection } from "../core/types.ts";
import { showSafely } from "../text/show.ts";
import { holding } from "./conn.ts";
import { type Ctx, endedBefore } from "./context.ts";
import { sfSha256, wantsSha256 } from "./digest.ts";
import { contentKey, entityTag } from "./digest-cache.ts";
import { contentDisposition } from "./disposition.ts";
import { parseRange, rangeApplies } from "./parse.ts";
import { stagedSize } from "./staged.ts";
import { streamFd } from "./stream-fd.ts";
import { openTarget } from "./target.ts";

const SWEEP_MS = 100;
/** Longest a sent response keeps its slot while the kernel still holds bytes for a client that stopped reading. */
const DRAIN_MAX_MS = 60_000;
const FD_DIR = "/proc/self/fd";

/**
 * The descriptors Bun is still sending from, each with its download slot (taken from the registry of what
 * tokens hold, core/holdings.ts). Bun tells when it is done with a response only when asked (`conn.sent()`),
 * so every take of a download slot asks first (`settle`): a response that ended has freed its slot before
 * anything is counted, and a refusal names the downloads really in progress. A timer closes the rest.
 */
export class Sending {
	readonly #open = new Map<number, { conn: Connection; release: () => void }>();
	/** Responses Bun is done with whose bytes still wait in the kernel: a revocation can still reset them. */
	readonly #draining = new Set<{ conn: Connection; release: () => void; until: number }>();
	#timer: ReturnType<typeof setInterval> | null = null;

	/** Takes `fd` (and its slot) to close after the response; false when Bun cannot tell this request's end. */
	track(conn: Connection, fd: number, release: () => void): boolean {
		if (conn.sent() !== false || !existsSync(FD_DIR)) return false;
		this.#open.set(fd, { conn, release });
		this.#timer ??= setInterval(() => this.settle(), SWEEP_MS);
		this.#timer.unref?.();
		return true;
	}

	/** Closes the descriptor and frees the slot of every response Bun is done with. */
	settle(): void {
		const now = performance.now();
		for (const [fd, { conn, release }] of this.#open) {
			if (conn.sent() === false) continue;
			this.#open.delete(fd);
			closeSync(fd);
			this.#draining.add({ conn, release, until: now + DRAIN_MAX_MS });
		}
		for (const d of this.#draining) {
			if ((d.conn.queued() ?? 0) > 0 && now < d.until) continue;
			this.#draining.delete(d);
			d.release();
		}
		if (this.#open.size === 0 && this.#draining.size === 0 && this.#timer !== null) {
			clearInterval(this.#timer);
			this.#timer = null;
		}
	}
}

const OCTETS = "application/octet-stream";
const CUT = "this download was cut";

export async function download(req: Request, path: string, ctx: Ctx, sending: Sending): Promise<Response> {
	const { refuse } = ctx;
	const want = wantsSha256(req.headers.get("want-repr-digest"));
	if (!want.ok) return refuse(path, null, want.code, want.why);
	sending.settle();
	// Revoking the token resets a connection whose answer is being sent (a close lets the kernel drain MBs it
	// queued); before that (a digest wait) the answer is the refusal, and a reset then left the host busy.
	// The request keeps its one record: a digest wait or a streamed file writes its end; a sent file's is written.
	let answering = false;
	const taken = ctx.take("downloads", reason => {
		if (!answering && !ctx.recorded()) return ctx.conn.closeSoon();
		const how = ctx.conn.cut() ? "reset" : "closed";
		ctx.log(`a2a-bridge: /blob: ${reason}: a download of ${showSafely(path, 200)} was ${how}`);
	});
	if (!taken.ok) {
		if (taken.code === "revoked") return endedBefore(ctx, path, null);
		return refuse(path, null, "too_many_downloads", `${taken.why}; retry later`);
	}
	const { release } = taken.slot;
	let handed = false;
	try {
		const answer = await serve(req, path, want.value, { ...ctx, ended: taken.slot.ended }, sending, release);
		handed = answer.handed;
		// A streamed pseudo-file writes its record at its end, yet its bytes are on their way now.
		answering = handed;
		return answer.response;
	} finally {
		if (!handed) release();
	}
}

/** The answer, and whether its slot went with it (to the sweep or the stream), else it ends with the request. */
async function serve(
	req: Request,
	path: string,
	wantDigest: boolean,
	ctx: Ctx,
	sending: Sending,
	release: () => void,
): Promise<{ response: Response; handed: boolean }> {
	const { note, refuse } = ctx;
	const head = req.method === "HEAD";
	const now = (response: Response) => ({ response, handed: false });
	// A staged (cut) PUT of this path: HEAD tells its size, the offset to continue it with.
	const staged = head ? stagedSize(reachedPath(path)) : null;
	const stagedHeader: Record<string, string> = staged === null ? {} : { "upload-offset": String(staged) };
	const opened = openTarget(path, "read");
	if (!opened.ok) return now(refuse(path, null, opened.code, opened.why, stagedHeader));
	const { fd, st, pseudo } = opened;
	if (pseudo !== null) return servePseudo(head, path, fd, ctx, release);
	const size = st.size;
	const key = contentKey(fd);
	const etag = entityTag(key);
	const asked = rangeApplies(req.headers.get("if-range"), etag) ? req.headers.get("range") : null;
	const range = parseRange(asked, size);
	if (!range.ok) {
		closeSync(fd);
		return now(refuse(path, null, range.code, range.why, { "content-range": `bytes */${size}` }));
	}
	const { start, end } = range.value ?? { start: 0, end: size - 1 };
	const length = end - start + 1;
	const headers: Record<string, string> = {
		"content-type": OCTETS,
		"content-length": String(length),
		"accept-ranges": "bytes",
		"content-disposition": contentDisposition(path),
		etag,
		...stagedHeader,
	};
	if (range.value) headers["content-range"] = `bytes ${start}-${end}/${size}`;
	if (wantDigest) {
		const hashed = await wholeDigest(req, path, fd, key, size, ctx);
		if (typeof hashed !== "string") {
			closeSync(fd);
			return now(hashed);
		}
		headers["repr-digest"] = sfSha256(hashed);
	}
	const status = range.value ? 206 : 200;
	note(path, start, head ? 0 : length);
	if (head || length === 0) {
		closeSync(fd);
		return now(new Response(null, { status, headers }));
	}
	// Slicing pins the length to the size checked above even if the file grows while it streams.
	if (sending.track(ctx.conn, fd, release)) {
		const file = Bun.file(`${FD_DIR}/${fd}`).slice(start, end + 1, OCTETS);
		return { response: new Response(file, { status, headers }), handed: true };
	}
	const stream = streamFd(fd, start, end + 1, release, ctx.ended);
	return { response: new Response(stream, { status, headers }), handed: true };
}

/**
 * The file's SHA-256: remembered, or from the one hash job of this file version (blob/hash-jobs.ts),
 * remembered if the file did not change meanwhile. A refusal (no share left, a read error, the caller
 * gone) comes back as the response to send.
 */
async function wholeDigest(
	req: Request,
	path: string,
	fd: number,
	key: string,
	size: number,
	ctx: Ctx,
): Promise<string | Response> {
	const known = ctx.digests.recall(key);
	if (known !== undefined) return known;
	// The wait is a slot joining the file version's one hash: starting a hash takes the token's share, joining
	// one that runs is free; revoking the token leaves it (and the hash stops when nobody waits).
	const taken = ctx.take("digests", undefined, key);
	if (!taken.ok) {
		if (taken.code === "revoked") return endedBefore(ctx, path, null);
		return ctx.refuse(path, null, "too_many_downloads", `${taken.why}; retry later`);
	}
	let hex: string | null;
	try {
		const leave = AbortSignal.any([req.signal, taken.slot.ended]);
		hex = await holding(ctx.conn, () => ctx.hashes.wait(fd, key, size, leave));
	} catch (err) {
		return ctx.refuse(path, null, "read_failed", `cannot hash ${path}: ${String(err)}`);
	} finally {
		taken.slot.release();
	}
	if (hex === null) {
		const why = taken.slot.ended.aborted ? "its token was revoked or rotated" : "client disconnected";
		return ctx.refuse(path, null, "client_disconnected", `${why} while the file was hashed`);
	}
	if (contentKey(fd) === key) ctx.digests.remember(key, hex);
	return hex;
}

/** A kernel pseudo-file: streamed to EOF, no length, no ranges (its size is made up). */
function servePseudo(
	head: boolean,
	path: string,
	fd: number,
	ctx: Ctx,
	release: () => void,
): { response: Response; handed: boolean } {
	if (head) {
		closeSync(fd);
		ctx.note(path, 0, 0);
		// Chunked, as GET would answer: no Content-Length (Bun would otherwise claim 0).
		const headers = { "content-type": OCTETS, "transfer-encoding": "chunked" };
		return { response: new Response(null, { status: 200, headers }), handed: false };
	}
	const body = streamFd(
		fd,
		0,
		null,
		bytes => {
			ctx.note(path, 0, bytes, ctx.ended?.aborted ? `its token was revoked or rotated: ${CUT}` : undefined);
			release();
		},
		ctx.ended,
	);
	const headers = { "content-type": OCTETS, "content-disposition": contentDisposition(path) };
	return { response: new Response(body, { status: 200, headers }), handed: true };
}
