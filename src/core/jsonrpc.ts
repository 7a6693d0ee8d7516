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

export type EnvelopeParse = { ok: true; value: Envelope } | Refused;

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

/** The id an invalid message's error answer echoes: its own when readable, else null (JSON-RPC §5). */
export function requestIdOf(value: unknown): RpcId | null {
	return isRecord(value) && isId(value.id) ? value.id : null;
}

export function parseEnvelope(value: unknown): EnvelopeParse {
	const bad = (why: string): Refused => ({ ok: false, why });
	if (!isRecord(value)) return bad("the message is not a JSON object");
	const id = requestIdOf(value);
	if (value.jsonrpc !== "2.0") return bad('jsonrpc is not "2.0"');
	if ("method" in value) {
		const { method, params } = value;
		if (typeof method !== "string" || method === "") return bad("method is not a non-empty string");
		// MCP params are always objects; positional (array) params have no meaning here.
		if (params !== undefined && !isRecord(params)) return bad("params is not an object");
		if (!("id" in value)) return { ok: true, value: { kind: "notification", method, params } };
		if (id === null) return bad("the request's id is neither a string nor a finite number");
		return { ok: true, value: { kind: "request", id, method, params } };
	}
	if (id !== null && "result" in value !== "error" in value) return { ok: true, value: { kind: "response", id } };
	return bad("neither a request, a notification nor a response");
}
