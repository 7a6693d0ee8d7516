/**
 * `/blob` values without effects (contract §7): the stable error codes and their statuses, the query
 * (`path`, `offset`), lexical path resolution and the single `Range` the downloads serve. Pure: parsers
 * return `{ok, value}` or `{ok: false, code, why}` (`Refused`). Digest headers: blob/digest.ts.
 */
import { isAbsolute, resolve } from "node:path";
import type { BlobMode } from "../config/tokens.ts";
import { refusalsOf } from "../core/route-kit.ts";
import type { Refused } from "../core/types.ts";

export const BLOB_METHODS = ["PUT", "POST", "GET", "HEAD"] as const;
export const MAX_UPLOADS_IN_FLIGHT = 64;
/** Each download holds its descriptor until the response is sent (blob/download.ts). */
export const MAX_DOWNLOADS_IN_FLIGHT = 256;

export const isUpload = (method: string): boolean => method === "PUT" || method === "POST";

/** Each stable code and its HTTP status; docs/protocol.md carries the same table. @internal */
export const BLOB_ERRORS = {
	bad_path: 400,
	bad_offset: 400,
	bad_digest: 400,
	digest_mismatch: 400,
	empty_body: 400,
	is_directory: 400,
	not_regular_file: 400,
	client_disconnected: 400,
	forbidden: 403,
	own_file: 403,
	not_found: 404,
	file_exists: 409,
	offset_mismatch: 409,
	upload_in_progress: 409,
	file_changed: 409,
	range_not_satisfiable: 416,
	audit_budget: 429,
	write_failed: 500,
	read_failed: 500,
	too_many_uploads: 503,
	too_many_downloads: 503,
} as const;

export type BlobCode = keyof typeof BLOB_ERRORS;
export type BlobParsed<T> = { ok: true; value: T } | Refused<BlobCode>;
export interface BlobQuery {
	path: string;
	offset: number | null;
}
/** Inclusive byte positions, as in `Content-Range`. */
export interface ByteRange {
	start: number;
	end: number;
}

const fail = (code: BlobCode, why: string): Refused<BlobCode> => ({
	ok: false,
	code,
	why,
});
const DIGITS = /^[0-9]+$/;

/** Reads `?path=` (exactly once, non-empty, no NUL) and `?offset=` (decimal, uploads only). */
export function parseBlobQuery(params: URLSearchParams, method: string): BlobParsed<BlobQuery> {
	const paths = params.getAll("path");
	if (paths.length !== 1) return fail("bad_path", "give the file as ?path=<path>, exactly once");
	const path = paths[0] as string;
	if (path === "") return fail("bad_path", "path is empty");
	if (path.includes("\u0000")) return fail("bad_path", "path contains a NUL byte");
	const offsets = params.getAll("offset");
	if (offsets.length === 0) return { ok: true, value: { path, offset: null } };
	if (!isUpload(method)) return fail("bad_offset", "offset applies to uploads only; use a Range header to read part");
	const raw = offsets[0] as string;
	if (offsets.length > 1 || !DIGITS.test(raw) || !Number.isSafeInteger(Number(raw))) {
		return fail("bad_offset", `offset must be one non-negative decimal integer, got '${offsets.join("', '")}'`);
	}
	return { ok: true, value: { path, offset: Number(raw) } };
}

/** Why `method` is refused under `mode`, or null when it is served. */
export function blobRefusal(mode: BlobMode, method: string): string | null {
	if (mode === "off") return `/blob is off on this host (config "blob": "off")`;
	if (mode === "read" && isUpload(method))
		return `/blob is read-only on this host (config "blob": "read"): uploads (PUT, POST) are refused`;
	return null;
}

/** Lexical resolution (no realpath): `~` and `~/x` under home, relative paths under cwd; null when relative and no cwd. */
export function resolveBlobPath(raw: string, base: { home: string; cwd: string | null }): string | null {
	if (raw === "~") return resolve(base.home);
	if (raw.startsWith("~/")) return resolve(base.home, raw.slice(2));
	if (isAbsolute(raw)) return resolve(raw);
	return base.cwd === null ? null : resolve(base.cwd, raw);
}

/** Why a relative path is refused on a host whose Main does not give its working directory. */
export const NO_CWD =
	"relative path refused: this host does not give the Main session's working directory (host fact 'main-cwd' missing); give an absolute path";

/**
 * A single `bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `size` bytes (RFC 9110 §14).
 * No header, another unit or several ranges → whole file (`null`: RFC 9110 §14.2 lets a server ignore
 * `Range`, and one range is all this route serves); malformed or out-of-range → 416.
 */
export function parseRange(header: string | null, size: number): BlobParsed<ByteRange | null> {
	if (header === null) return { ok: true, value: null };
	const eq = header.indexOf("=");
	if (eq < 0) return fail("range_not_satisfiable", `malformed Range '${header}'`);
	if (header.slice(0, eq).trim().toLowerCase() !== "bytes") return { ok: true, value: null };
	const spec = header.slice(eq + 1).trim();
	const unsatisfiable = (why: string) => fail("range_not_satisfiable", `Range '${header}' ${why} (size ${size})`);
	if (spec.includes(",")) return { ok: true, value: null };
	const dash = spec.indexOf("-");
	const first = spec.slice(0, dash).trim();
	const last = spec.slice(dash + 1).trim();
	if (dash < 0 || (first === "" && last === "")) return unsatisfiable("is malformed");
	if ((first !== "" && !DIGITS.test(first)) || (last !== "" && !DIGITS.test(last)))
		return unsatisfiable("is malformed");
	if (first === "") {
		const n = Number(last);
		if (n === 0 || size === 0) return unsatisfiable("selects no bytes");
		return { ok: true, value: { start: Math.max(0, size - n), end: size - 1 } };
	}
	const start = Number(first);
	const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
	if (last !== "" && Number(last) < start) return unsatisfiable("ends before it starts");
	if (start >= size) return unsatisfiable("starts at or past the end");
	return { ok: true, value: { start, end } };
}

/**
 * Whether a `Range` is served (RFC 9110 §13.1.5): without `If-Range` yes; with one, only when it is this
 * file's strong `ETag` exactly. A date never matches (no `Last-Modified` is sent): the whole file comes
 * back, never part of a file that may have been replaced since.
 */
export const rangeApplies = (ifRange: string | null, etag: string): boolean =>
	ifRange === null || ifRange.trim() === etag;

export const json = (body: unknown, status: number, headers: Record<string, string> = {}): Response =>
	new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** A `/blob` refusal: `{error, code, …extra}` at the code's status (the route kit's one envelope). */
export const blobError = refusalsOf(BLOB_ERRORS);
