/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` and forwards everything else
 * unchanged: method, path and query, headers (Host included) and both bodies as streams. It exists
 * for clients that cannot send a token, such as the MCP conformance suite.
 *
 * The client's Host header is forwarded as sent, not rewritten to the bridge's port. The bridge's
 * DNS-rebinding guard compares Origin with `http://<Host>`; a client that talks to the proxy sends
 * `Host: 127.0.0.1:<proxy port>` and, when it sends one, the matching Origin, so the pair stays
 * consistent. A foreign Host (`evil.example.com`) reaches the bridge as it was sent and is judged
 * by the bridge, not by the proxy.
 */

import type { Server } from "bun";

/** Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection and are never forwarded. */
const HOP_BY_HOP = new Set([
	"connection",
	"keep-alive",
	"proxy-connection",
	"proxy-authenticate",
	"proxy-authorization",
	"te",
	"trailer",
	"transfer-encoding",
	"upgrade",
]);

export function forwardable(src: Headers): Headers {
	const out = new Headers();
	const named = (src.get("connection") ?? "")
		.split(",")
		.map(s => s.trim().toLowerCase())
		.filter(Boolean);
	for (const [name, value] of src) {
		if (HOP_BY_HOP.has(name) || named.includes(name)) continue;
		out.append(name, value);
	}
	return out;
}

export interface AuthProxy {
	/** `http://127.0.0.1:<port>/`. */
	readonly url: string;
	readonly port: number;
	/** Requests forwarded so far (a sanity check that the proxy was really in the path). */
	readonly forwarded: number;
	stop(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1, port 0, in this process. `target` is the bridge's base URL. */
export function startAuthProxy(target: string, token: string): AuthProxy {
	const base = new URL(target);
	let forwarded = 0;
	const server: Server<undefined> = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		// 0 = no idle timeout: an SSE response may stay quiet longer than Bun's default 10 s.
		idleTimeout: 0,
		async fetch(req) {
			const incoming = new URL(req.url);
			const upstream = new URL(incoming.pathname + incoming.search, base);
			const headers = forwardable(req.headers);
			headers.set("authorization", `Bearer ${token}`);
			const hasBody = req.method !== "GET" && req.method !== "HEAD" && req.body !== null;
			forwarded++;
			let res: Response;
			try {
				res = await fetch(upstream, {
					method: req.method,
					headers,
					body: hasBody ? req.body : undefined,
					duplex: "half",
					redirect: "manual",
					// Pass compressed bytes through as they are; the client decodes them.
					decompress: false,
					// A client that goes away aborts the upstream request too (ends SSE streams).
					signal: req.signal,
				} as RequestInit);
			} catch (err) {
				return new Response(`proxy: upstream request failed: ${String(err)}`, { status: 502 });
			}
			const noBody = req.method === "HEAD" || res.status === 204 || res.status === 205 || res.status === 304;
			return new Response(noBody ? null : res.body, {
				status: res.status,
				statusText: res.statusText,
				headers: forwardable(res.headers),
			});
		},
	});
	const port = server.port ?? 0;
	return {
		url: `http://127.0.0.1:${port}/`,
		port,
		get forwarded() {
			return forwarded;
		},
		async stop() {
			await server.stop(true);
		},
	};
}
