import { rpcError } from "./errors.ts";
import { recheck } from "./gate.ts";
import { type Envelope, parseEnvelope, parseJsonBody, requestIdOf } from "./jsonrpc.ts";
import type { Refused } from "./types.ts";

export type BodyRead = { ok: true; bytes: Uint8Array } | Refused<"body_too_large">;

/**
 * Reads at most `max` bytes. Content-Length is trusted only without Transfer-Encoding
 * (RFC 9112 §6.3); otherwise the stream is counted and dropped the moment it crosses the limit.
 */
export async function readBodyLimited(req: Request, max: number): Promise<BodyRead> {
	const tooLarge: BodyRead = { ok: false, code: "body_too_large", why: `request body larger than ${max} bytes` };
	const declared = req.headers.get("content-length");
	const chunked = req.headers.get("transfer-encoding") !== null;
	if (declared !== null && !chunked && Number(declared) > max) return tooLarge;
	// A declared length without Transfer-Encoding lets the runtime read the body in one piece and stop
	// there, so the limit holds. This path never touches `req.body`, which would build a stream for nothing.
	if (declared !== null && !chunked) {
		const bytes = await req.bytes();
		return bytes.byteLength > max ? tooLarge : { ok: true, bytes };
	}
	if (req.body === null) return { ok: true, bytes: new Uint8Array(0) };
	const reader = req.body.getReader();
	const chunks: Uint8Array[] = [];
	let total = 0;
	for (;;) {
		const { done, value } = await reader.read();
		if (done) break;
		total += value.byteLength;
		if (total > max) {
			await reader.cancel().catch(() => {});
			return tooLarge;
		}
		chunks.push(value);
	}
	const bytes = new Uint8Array(total);
	let off = 0;
	for (const c of chunks) {
		bytes.set(c, off);
		off += c.byteLength;
	}
	return { ok: true, bytes };
}

/**
 * The body steps of both eras: size limit, JSON, one JSON-RPC message, then `who` re-checked (contract §16:
 * an ended secret gets its 401, so no era acts on it); null only where nothing acts on the message.
 */
export async function readMessage(
	req: Request,
	max: number,
	who: { ended?: AbortSignal } | null,
): Promise<Envelope | Response> {
	const body = await readBodyLimited(req, max);
	if (!body.ok) return rpcError("body_too_large");
	const json = parseJsonBody(body.bytes);
	if (!json.ok) return rpcError("parse_error");
	const env = parseEnvelope(json.value);
	if (!env.ok) return rpcError("invalid_request", requestIdOf(json.value));
	return (who && recheck(who, "mcp")) ?? env.value;
}
