/**
 * The one error vocabulary: every protocol failure the bridge answers is a row here, with its
 * HTTP status, JSON-RPC code and fixed message; an era may answer a row at its own status (its rules,
 * core/methods.ts). `docs/protocol.md` carries the same table.
 * Tool failures are not here: they are `isError: true` results at HTTP 200. Unknown routes get a
 * plain-text 404 (`notFound`), not a JSON-RPC body, so OAuth discovery ends fast.
 */

/** The rows; product code reaches them through the builders below, tests and docs checks read them. @internal */
export const ERRORS = {
	forbidden_host: { status: 403, code: -32000, message: "forbidden: Host header not allowed" },
	forbidden_origin: { status: 403, code: -32000, message: "forbidden: Origin not allowed" },
	method_not_allowed: { status: 405, code: -32000, message: "method not allowed" },
	unauthorized: { status: 401, code: -32000, message: "unauthorized" },
	invalid_token: { status: 401, code: -32000, message: "unauthorized" },
	unsupported_protocol_version: { status: 400, code: -32022, message: "unsupported MCP-Protocol-Version" },
	body_too_large: { status: 413, code: -32000, message: "request body larger than 4 MiB" },
	parse_error: { status: 400, code: -32700, message: "parse error" },
	invalid_request: { status: 400, code: -32600, message: "invalid request" },
	session_required: { status: 400, code: -32000, message: "missing Mcp-Session-Id header" },
	session_not_found: { status: 404, code: -32001, message: "session not found" },
	method_not_found: { status: 200, code: -32601, message: "method not found" },
	invalid_params: { status: 200, code: -32602, message: "invalid params" },
	server_busy: { status: 200, code: -32000, message: "server busy" },
	// The host lacks what the method needs (src/host/facts.ts): the message names the missing fact.
	host_fact_missing: { status: 200, code: -32000, message: "unavailable: a host fact this method needs is missing" },
	audit_budget: {
		status: 200,
		code: -32000,
		message: "this token's audit budget is spent: calls are refused until it refills (data.retryAfterS)",
	},
	request_cancelled: { status: 200, code: -32800, message: "request cancelled" },
	internal_error: { status: 500, code: -32603, message: "internal error" },
	// The 2026-07-28 era (contract §13): client faults are HTTP errors there, not 200s.
	header_mismatch: { status: 400, code: -32020, message: "Mcp-Method or Mcp-Name header does not match the body" },
	envelope_invalid: {
		status: 400,
		code: -32602,
		message: "params._meta lacks the protocol version or the client capabilities",
	},
	// The Tasks extension (contract §17).
	missing_client_capability: { status: 400, code: -32021, message: "missing required client capability" },
	task_not_found: { status: 400, code: -32602, message: "unknown task id" },
} as const;

export type ErrorKind = keyof typeof ERRORS;
export type RpcId = string | number;

export const REALM = "omp-a2a-bridge";
/** The challenge of a 401 for a secret that is not (or no longer) live. */
export const INVALID_TOKEN_CHALLENGE = `Bearer realm="${REALM}", error="invalid_token"`;

const JSON_HEADERS = { "content-type": "application/json" } as const;
const jsonHeaders = (extra?: Record<string, string>) => (extra ? { ...JSON_HEADERS, ...extra } : JSON_HEADERS);

/** The `error` member of a JSON-RPC answer: a row's code, with its fixed message or a specific one. */
export interface RpcErrorObject {
	code: number;
	message: string;
	data?: unknown;
}

/**
 * Every JSON-RPC `error` object the bridge sends is built here, from a row: `message` replaces the
 * row's (e.g. naming the argument a tool refused), `data` is left out when undefined.
 */
export function errorObject(kind: ErrorKind, message?: string, data?: unknown): RpcErrorObject {
	const row = ERRORS[kind];
	const error = { code: row.code, message: message ?? row.message };
	return data === undefined ? error : { ...error, data };
}

/** Builds the response for an error row; `id` is null when the request id could not be read. */
export function rpcError(kind: ErrorKind, id: RpcId | null = null, headers: Record<string, string> = {}): Response {
	return rpcErrorData(kind, id, undefined, headers);
}

/** The same, with the error's `data` member (left out when undefined). */
export function rpcErrorData(
	kind: ErrorKind,
	id: RpcId | null,
	data: unknown,
	headers: Record<string, string> = {},
): Response {
	return errorResponse(kind, id, errorObject(kind, undefined, data), headers);
}

/** The row's code and status with a specific message, e.g. `-32602` naming the argument a tool refused. */
export function rpcErrorMessage(kind: ErrorKind, id: RpcId | null, message: string): Response {
	return errorResponse(kind, id, errorObject(kind, message));
}

/** The row at an era's own status for it (core/methods.ts `EraReplies`); the row's status when the era has none. */
export function rpcErrorAs(
	status: number | undefined,
	kind: ErrorKind,
	id: RpcId | null,
	message?: string,
	data?: unknown,
): Response {
	return errorResponse(kind, id, errorObject(kind, message, data), {}, status);
}

function errorResponse(
	kind: ErrorKind,
	id: RpcId | null,
	error: RpcErrorObject,
	headers: Record<string, string> = {},
	status: number = ERRORS[kind].status,
) {
	const body = JSON.stringify({ jsonrpc: "2.0", id, error });
	return new Response(body, { status, headers: jsonHeaders(headers) });
}

/** What a route refusal may carry beside its message and code (e.g. the state, the staged size); never those two. */
export type RefusalExtra = { readonly [member: string]: unknown; error?: never; code?: never };

/**
 * The one envelope of every refusal on an extra route (`/blob`, `/host-llm`, …): `{error, code, …extra}`
 * at the status the route's table gives the code. A curl user reads one shape from a route whether the
 * pipeline or the handler refused.
 */
export function routeRefusal(
	status: number,
	code: string,
	message: string,
	headers: Record<string, string> = {},
	extra: RefusalExtra = {},
): Response {
	return new Response(JSON.stringify({ error: message, code, ...extra }), { status, headers: jsonHeaders(headers) });
}

/** A pipeline row on an extra route, in the routes' envelope. */
export function routeError(kind: ErrorKind, headers: Record<string, string> = {}): Response {
	return routeRefusal(ERRORS[kind].status, kind, ERRORS[kind].message, headers);
}

/** Plain-text 404 for unknown routes and OAuth discovery paths: ends client discovery fast. */
export function notFound(): Response {
	return new Response("not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
}

export function rpcResult(id: RpcId, result: unknown, headers?: Record<string, string>): Response {
	const body = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result ?? null)}}`;
	return new Response(body, { status: 200, headers: jsonHeaders(headers) });
}

/** A 200 answer whose JSON-RPC body is already assembled as bytes (Bun copies them: the caller may reuse them). */
export function rpcAnswerBytes(body: Uint8Array, headers?: Record<string, string>): Response {
	return new Response(body, { status: 200, headers: jsonHeaders(headers) });
}
