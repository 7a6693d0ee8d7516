/**
 * A loopback pass-through in front of the bridge that records, for every MCP request a client sends,
 * the HTTP method, the JSON-RPC method and the era it spoke (its `MCP-Protocol-Version` header; for
 * `initialize`, the version it asked for), and whether a `tools/call` carried a progress token (without one the
 * bridge sends no progress, so no timer can restart on it). The client's own Authorization header goes through as sent.
 */
import { forwardable } from "../helpers/proxy.ts";

export interface WireRecord {
	http: string;
	method: string | null;
	/** `MCP-Protocol-Version` as sent, or null. */
	header: string | null;
	/** `params.protocolVersion` of an initialize. */
	asked: string | null;
	/** A `tools/call` whose `params._meta.progressToken` is a string or a number. */
	progressToken: boolean;
	status: number;
}

export interface WireRecorder {
	readonly url: string;
	readonly records: WireRecord[];
	stop(): Promise<void>;
}

export function startWireRecorder(target: string): WireRecorder {
	const base = new URL(target);
	const records: WireRecord[] = [];
	const srv = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		idleTimeout: 0,
		async fetch(req) {
			const incoming = new URL(req.url);
			const hasBody = req.method !== "GET" && req.method !== "HEAD";
			const text = hasBody ? await req.text() : "";
			let method: string | null = null;
			let asked: string | null = null;
			let progressToken = false;
			try {
				const msg = JSON.parse(text) as {
					method?: unknown;
					params?: { protocolVersion?: unknown; _meta?: { progressToken?: unknown } };
				};
				method = typeof msg.method === "string" ? msg.method : null;
				asked = typeof msg.params?.protocolVersion === "string" ? msg.params.protocolVersion : null;
				const pt = msg.params?._meta?.progressToken;
				progressToken = method === "tools/call" && (typeof pt === "string" || typeof pt === "number");
			} catch {}
			const rec: WireRecord = {
				http: req.method,
				method,
				header: req.headers.get("mcp-protocol-version"),
				asked,
				progressToken,
				status: 0,
			};
			records.push(rec);
			let res: Response;
			try {
				res = await fetch(new URL(incoming.pathname + incoming.search, base), {
					method: req.method,
					headers: forwardable(req.headers),
					body: hasBody ? text : undefined,
					redirect: "manual",
					decompress: false,
					signal: req.signal,
				} as RequestInit);
			} catch (err) {
				return new Response(`recorder: upstream failed: ${String(err)}`, { status: 502 });
			}
			rec.status = res.status;
			const noBody = req.method === "HEAD" || res.status === 204 || res.status === 304;
			return new Response(noBody ? null : res.body, { status: res.status, headers: forwardable(res.headers) });
		},
	});
	return { url: `http://127.0.0.1:${srv.port}/mcp`, records, stop: () => srv.stop(true) };
}

/** The era a client's tools/call travelled in: `2026-07-28`, or `2025` for any session-era version. */
const answeredCall = (records: WireRecord[]): WireRecord | undefined =>
	records.find(r => r.method === "tools/call" && r.status === 200);

export function eraOfCall(records: WireRecord[]): "2026-07-28" | "2025" | "none" {
	const call = answeredCall(records);
	if (!call) return "none";
	return call.header === "2026-07-28" ? "2026-07-28" : "2025";
}

/** Whether the client's answered tools/call asked for progress; null when no call was answered. */
export function askedForProgress(records: WireRecord[]): boolean | null {
	return answeredCall(records)?.progressToken ?? null;
}
