/**
 * Pure checks of the MCP 2026-07-28 era (contract §13): the per-request `_meta` envelope and the
 * routing headers (SEP-2243) with their base64 form. Which era a request belongs to is in facts.ts.
 * Each returns a value; modern.ts turns a failure into its error-table row.
 */
import { clientName } from "./client-name.ts";
import { isRecord } from "./jsonrpc.ts";
import { TASK_METHODS } from "./task-parse.ts";
import type { Refused } from "./types.ts";

/** @internal */
export const META_VERSION = "io.modelcontextprotocol/protocolVersion";
/** @internal */
export const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
/** @internal */
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

const SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as sent: verbatim, or the UTF-8 text inside `=?base64?…?=`. Null for a missing
 * header and for a malformed sentinel (bad or non-canonical base64, bad UTF-8), so it never matches.
 * @internal
 */
export function decodeHeaderValue(value: string | null): string | null {
	if (value === null) return null;
	const m = SENTINEL.exec(value);
	if (m === null) return value;
	const payload = m[1] ?? "";
	if (!BASE64.test(payload)) return null;
	const bytes = Buffer.from(payload, "base64");
	if (bytes.toString("base64") !== payload) return null;
	try {
		return UTF8.decode(bytes);
	} catch {
		return null;
	}
}

export interface RoutingHeaders {
	version: string | null;
	method: string | null;
	name: string | null;
}

export type ModernCheck = { ok: true; client: string | null } | Refused<"envelope_invalid" | "header_mismatch">;

const mismatch = (header: string): ModernCheck => ({
	ok: false,
	code: "header_mismatch",
	why: `${header} does not match the body`,
});

/**
 * The modern request ladder, first failure wins (the order of the reference server): the
 * `_meta` envelope, then the headers against the body (version, `Mcp-Method`, and `Mcp-Name`
 * on `tools/call`). The version itself was settled by `eraOf` before the body was read.
 */
export function checkModernRequest(
	method: string,
	params: Record<string, unknown> | undefined,
	headers: RoutingHeaders,
): ModernCheck {
	const meta = params?._meta;
	if (!isRecord(meta) || !(META_VERSION in meta) || !(META_CAPABILITIES in meta)) {
		return { ok: false, code: "envelope_invalid", why: "params._meta lacks the protocol version or the capabilities" };
	}
	if (headers.version === null || headers.version.trim() !== meta[META_VERSION]) {
		return mismatch("MCP-Protocol-Version");
	}
	if (decodeHeaderValue(headers.method) !== method) return mismatch("Mcp-Method");
	if (method === "tools/call" && typeof params?.name === "string") {
		if (decodeHeaderValue(headers.name) !== params.name) return mismatch("Mcp-Name (the tool)");
	}
	// Tasks extension: `Mcp-Name` carries the task id on its methods (a missing id fails later, as params).
	if (TASK_METHODS.includes(method) && typeof params?.taskId === "string") {
		if (decodeHeaderValue(headers.name) !== params.taskId) return mismatch("Mcp-Name (the task id)");
	}
	return { ok: true, client: clientName(meta[META_CLIENT_INFO]) };
}
