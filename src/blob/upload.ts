/**
 * The one body writer of `PUT` and `POST /blob`: Bun pipes the request into an open descriptor (opened
 * with O_APPEND), a worker hashes behind it, a watch cuts a stalled sender. Also what both methods share
 * after the body: the digest check against `Repr-Digest`/`Content-Digest` and the reply.
 */
import { fdatasync, fstatSync } from "node:fs";
import { watchIdentity } from "../core/route-kit.ts";
import { errorText } from "../text/error-text.ts";
import { type Ctx, errno } from "./context.ts";
import { type Digests, digestsWhile, FOLLOW_MIN_BYTES, followHash } from "./hash.ts";
import { blobError, json } from "./parse.ts";
import { watchStall } from "./stall.ts";

export const EMPTY_BODY = "the request body is empty: nothing to write";

/** What the caller said the bytes must hash to (hex sha-256), from the request's digest fields. */
export interface Expected {
	/** `Repr-Digest`: the whole file as it will stand. */
	whole: string | null;
	/** `Content-Digest`: this request's bytes. */
	part: string | null;
}

export type Stop = { code: "write_failed" | "client_disconnected"; why: string } | null;
export interface Written {
	stop: Stop;
	/** How much the file grew. */
	landed: number;
	/** How much this request wrote, as Bun counted it (-1 when the pipe broke). */
	wrote: number;
	/** The digests of the file and of this request's bytes, for a body that came in whole (`stop` null). */
	digests?: Digests;
}

/** File-system errors carry an errno code ("ENOSPC"); a dropped connection does not. */
function classify(err: unknown, stalledFor: number | null): Exclude<Stop, null> {
	const code = errno(err);
	if (typeof code === "string" && code.startsWith("E")) return { code: "write_failed", why: errorText(err) };
	if (stalledFor !== null) {
		return { code: "client_disconnected", why: `client stalled (no byte for ${stalledFor / 1000} s)` };
	}
	return { code: "client_disconnected", why: "client disconnected" };
}

/** Why an upload whose caller's secret ended stops (400 `client_disconnected`, docs/protocol.md). */
const REVOKED = "token revoked or rotated";

/**
 * Appends the body to `fd` (now `at` bytes long). Bun pipes it natively: no chunk passes through the JS
 * heap (a JS chunk loop with `writeSync` let the host's peak RSS grow past 100 MiB; docs/performance.md).
 * The stall watch's tick is the one place that looks at an upload while it streams. Call it before the
 * handler first yields: a body Bun already holds whole goes out as a blob, and Bun 1.4 ftruncates the
 * descriptor to the body's length first (an appended file cut, a staged one doubled; measured).
 */
export async function pipeBody(
	req: Request,
	fd: number,
	at: number,
	ctx: Pick<Ctx, "conn" | "ended" | "stallMs">,
	flushBehind = false,
): Promise<Written> {
	const { conn, ended, stallMs: bound } = ctx;
	const declared = Number(req.headers.get("content-length") ?? Number.NaN);
	// A body of unknown length (chunked) counts as large.
	const small = at + declared < FOLLOW_MIN_BYTES;
	const follower = small ? null : followHash(fd, at);
	const flusher = flushBehind && !small ? flushBehindWriter(fd) : null;
	const watch = watchStall(fd, bound, () => conn.closeSoon());
	// Contract §16, the kit's watch: a secret revoked or rotated mid-body cuts the connection like a stall, and
	// one that ended by the time the body is in stops the upload all the same; nothing of it is installed.
	const body = await watchIdentity(
		ended,
		() => conn.closeSoon(),
		() => (req.body === null ? Promise.resolve(0) : Bun.write(Bun.file(fd), req)),
	);
	watch.stop();
	await flusher?.stop();
	const wrote = body.piped.ok ? body.piped.value : -1;
	let stop: Stop = null;
	if (body.ended) stop = { code: "client_disconnected", why: REVOKED };
	else if (!body.piped.ok) stop = classify(body.piped.error, watch.stalled ? bound : null);
	const landed = fstatSync(fd).size - at;
	if (stop !== null || wrote !== landed) {
		await follower?.cancel();
		return { stop, landed, wrote };
	}
	// The digest runs only while its client is there (contract §19): one that leaves, or is revoked, stops it.
	const gone = ended ? AbortSignal.any([req.signal, ended]) : req.signal;
	const digests = await digestsWhile(fd, at, at + landed, follower, gone);
	if (digests !== null) return { stop, landed, wrote, digests };
	const why = ended?.aborted ? REVOKED : "client disconnected";
	return { stop: { code: "client_disconnected", why: `${why} while the upload was hashed` }, landed, wrote };
}

/** Bytes written since the last flush that start the next one. */
const FLUSH_BEHIND_BYTES = 16 * 1024 * 1024;
const FLUSH_TICK_MS = 20;

/**
 * For a PUT, which fsyncs before its rename: `fdatasync` on Bun's thread pool whenever FLUSH_BEHIND_BYTES
 * more have landed, so the disk writes overlap the transfer and the final fsync finds little left. `stop`
 * waits for a flush in flight (the descriptor must outlive it).
 */
function flushBehindWriter(fd: number): { stop(): Promise<void> } {
	let flushed = 0;
	let inFlight: Promise<void> | null = null;
	const timer = setInterval(() => {
		if (inFlight !== null) return;
		let size = 0;
		try {
			size = fstatSync(fd).size;
		} catch {
			return;
		}
		if (size - flushed < FLUSH_BEHIND_BYTES) return;
		inFlight = new Promise<void>(resolve =>
			fdatasync(fd, () => {
				flushed = size;
				inFlight = null;
				resolve();
			}),
		);
	}, FLUSH_TICK_MS);
	return {
		async stop() {
			clearInterval(timer);
			await inFlight;
		},
	};
}

/** The digests of the file as it stands after a complete body (pipeBody hashed it, or the hash stopped). */
export const digestsAfter = (w: Written): Digests => {
	if (w.digests === undefined) throw new Error("a complete body without its digests");
	return w.digests;
};

/** Why the bytes are refused, or null: a digest the caller gave that does not match. */
export function digestMismatch(expected: Expected, got: Digests): string | null {
	const wrong: string[] = [];
	if (expected.whole !== null && expected.whole !== got.whole) {
		wrong.push(`Repr-Digest (the whole file) expected sha-256 ${expected.whole}, the file would be ${got.whole}`);
	}
	if (expected.part !== null && expected.part !== got.part) {
		wrong.push(`Content-Digest (this request) expected sha-256 ${expected.part}, the bytes received are ${got.part}`);
	}
	return wrong.length === 0 ? null : wrong.join("; ");
}

/**
 * A refused upload names the refused bytes' digests for what they are (contract §20): nothing in it reads as
 * the digest of a file that landed, so a script looking for `sha256` finds none.
 */
export const mismatchReply = (message: string, got: Digests): Response =>
	blobError("digest_mismatch", message, {}, { rejected_sha256: got.whole, rejected_request_sha256: got.part });

/** The 200 of an upload: `sha256` is the whole file now, `request_sha256` this request's bytes. */
export const uploadReply = (
	path: string,
	at: number,
	landed: number,
	size: number,
	got: Digests,
	extra: Record<string, unknown> = {},
): Response =>
	json({ path, ...extra, offset: at, written: landed, size, sha256: got.whole, request_sha256: got.part }, 200);
