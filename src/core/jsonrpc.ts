/**
 * JSON-RPC 2.0 envelope parsing for one POST body. Batches (arrays) are refused: protocol
 * 2025-06-18 removed them, and a single-message server keeps one response per request.
 */
import type { RpcId } from "./errors.ts";
import type { Refused } from "./types.ts";

export type Envelope =
	| { kind: "request"; id: RpcId; method: string; params: Record<string, unknown> | undefined }
	| { kind: "notification"; method: string; params: Record<string, unknown> | undefined }
	| { kind: "response"; id: RpcId };

export type EnvelopeParse = { ok: true; value: Envelope } | { ok: false; id: RpcId | null };

export const isRecord = (v: unknown): v is Record<string, unknown> =>
	typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RpcId => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes UTF-8 strictly and parses JSON; or why not (the caller answers -32700). */
export function parseJsonBody(bytes: Uint8Array): { ok: true; value: unknown } | Refused {
	let text: string;
	try {
		text = UTF8.decode(bytes);
	} catch {
		return { ok: false, why: "the body is not UTF-8" };
	}
	try {
		return { ok: true, value: JSON.parse(text) };
	} catch {
		return { ok: false, why: "the body is not JSON" };
	}
}

export function parseEnvelope(value: unknown): EnvelopeParse {
	if (!isRecord(value)) return { ok: false, id: null };
	const id = isId(value.id) ? value.id : null;
	if (value.jsonrpc !== "2.0") return { ok: false, id };
	if ("method" in value) {
		const { method, params } = value;
		if (typeof method !== "string" || method === "") return { ok: false, id };
		// MCP params are always objects; positional (array) params have no meaning here.
		if (params !== undefined && !isRecord(params)) return { ok: false, id };
		if (!("id" in value)) return { ok: true, value: { kind: "notification", method, params } };
		if (id === null) return { ok: false, id: null };
		return { ok: true, value: { kind: "request", id, method, params } };
	}
	if (id !== null && "result" in value !== "error" in value) return { ok: true, value: { kind: "response", id } };
	return { ok: false, id };
}
