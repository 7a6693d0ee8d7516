/** Raw 2026-07-28 requests (contract §13): the `_meta` envelope, the routing headers, no session. */
import type { Host } from "./host.ts";

export const MODERN = "2026-07-28";
export const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

export const envelope = (client = "raw-wire"): Record<string, unknown> => ({
	"io.modelcontextprotocol/protocolVersion": MODERN,
	"io.modelcontextprotocol/clientCapabilities": {},
	"io.modelcontextprotocol/clientInfo": { name: client, version: "0" },
});

export interface ModernOptions {
	id?: number | string;
	/** Header overrides; null removes a header. */
	headers?: Record<string, string | null>;
	/** Replaces params._meta (null leaves it out). */
	meta?: Record<string, unknown> | null;
	signal?: AbortSignal;
}

/** The headers and body a modern client sends for one request. */
export function modernRequest(
	host: Host,
	method: string,
	params: Record<string, unknown> = {},
	opts: ModernOptions = {},
): { headers: Record<string, string>; body: string } {
	const meta = opts.meta === undefined ? envelope() : opts.meta;
	const fullParams = meta === null ? params : { ...params, _meta: { ...meta, ...(params._meta as object) } };
	const base: Record<string, string> = host.headers({
		accept: "application/json, text/event-stream",
		"mcp-protocol-version": MODERN,
		"mcp-method": method,
		...(typeof params.name === "string" && method === "tools/call" ? { "mcp-name": params.name } : {}),
		// Tasks extension: a tasks/* request routes by its task id.
		...(typeof params.taskId === "string" && method.startsWith("tasks/") ? { "mcp-name": params.taskId } : {}),
	});
	for (const [k, v] of Object.entries(opts.headers ?? {})) {
		if (v === null) delete base[k];
		else base[k] = v;
	}
	return { headers: base, body: JSON.stringify({ jsonrpc: "2.0", id: opts.id ?? 1, method, params: fullParams }) };
}

export function modernPost(
	host: Host,
	method: string,
	params: Record<string, unknown> = {},
	opts: ModernOptions = {},
): Promise<Response> {
	const { headers, body } = modernRequest(host, method, params, opts);
	return fetch(host.url, { method: "POST", headers, body, ...(opts.signal ? { signal: opts.signal } : {}) });
}

/** Command lines of running processes that contain `needle`. */
export function processesWith(needle: string): string[] {
	const ps = Bun.spawnSync(["ps", "-eo", "args="]);
	return ps.stdout
		.toString()
		.split("\n")
		.filter(l => l.includes(needle) && !l.includes("ps -eo"));
}

/** A JSON-RPC POST to a `BridgeServer` in process (Host 127.0.0.1:9) with `token`'s Bearer, either era. */
export function corePost(token: string, headers: Record<string, string>, body: unknown): Request {
	const h = new Headers([
		["host", "127.0.0.1:9"],
		["authorization", `Bearer ${token}`],
		["content-type", "application/json"],
		["accept", "application/json, text/event-stream"],
	]);
	for (const [k, v] of Object.entries(headers)) h.set(k, v);
	return new Request("http://127.0.0.1:9/", { method: "POST", headers: h, body: JSON.stringify(body) });
}
