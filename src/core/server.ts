/**
 * The fetch-shaped core: `handle(Request) → Response`. It knows HTTP and JSON-RPC only; the host is
 * reached through `BridgeDeps`. Guards run in the order of contract §4 (mirrored in
 * docs/protocol.md); each returns a Response to answer with, or nothing to go on.
 */
import { checkAuth, checkHostOrigin, type HostOriginResult, tokenFingerprint } from "../config/auth.ts";
import { readBodyLimited } from "./body.ts";
import { CallTable } from "./calls.ts";
import { describe } from "./describe.ts";
import {
	type ErrorKind,
	notFound,
	REALM,
	type RpcId,
	routeError,
	rpcError,
	rpcResult,
	rpcResultJson,
} from "./errors.ts";
import { type Envelope, parseEnvelope, parseJsonBody } from "./jsonrpc.ts";
import { type Session, SessionTable } from "./sessions.ts";
import { requestPath } from "./target.ts";
import type { BridgeDeps, InFlightCall, McpTool, ServerOptions } from "./types.ts";

export { readBodyLimited } from "./body.ts";
export { MAX_CALLS_IN_FLIGHT } from "./calls.ts";
export type {
	BridgeDeps,
	CallAudit,
	ContentBlock,
	ExtraRoute,
	InFlightCall,
	McpTool,
	ServerOptions,
	ToolCallOutcome,
	ToolCallRequest,
} from "./types.ts";

export const SUPPORTED_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"] as const;
export const LATEST_VERSION = "2025-11-25";
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const UNAUTHORIZED_LOG_EVERY = 50;

type Guard = Response | undefined;

/** Pipeline refusals speak the route's language: JSON-RPC on MCP, `{error, code}` elsewhere. */
const refuse = (route: Route, kind: ErrorKind, headers: Record<string, string> = {}): Response =>
	route === "mcp" ? rpcError(kind, null, headers) : routeError(kind, headers);
type Route = "mcp" | string;

const OAUTH_PATHS = new Set(["/authorize", "/token", "/register"]);
const MCP_METHODS = ["POST", "DELETE"] as const;

export class BridgeServer {
	readonly sessions: SessionTable;
	readonly calls: CallTable;
	#token: string;
	#fingerprint: string;
	#unauthorized = 0;
	#listMemo: { list: readonly McpTool[]; json: Blob } | null = null;
	#hostMemo: { host: string | null; origin: string | null; result: HostOriginResult } | null = null;
	readonly #deps: BridgeDeps;
	readonly #opts: ServerOptions;
	readonly #now: () => number;

	constructor(deps: BridgeDeps, opts: ServerOptions, sessions?: SessionTable) {
		this.#deps = deps;
		this.#opts = opts;
		this.#now = deps.now ?? Date.now;
		this.#token = opts.token;
		this.#fingerprint = tokenFingerprint(opts.token);
		this.sessions =
			sessions ?? new SessionTable({ now: this.#now, ...(opts.sessionTtlMs ? { ttlMs: opts.sessionTtlMs } : {}) });
		this.calls = new CallTable(deps, opts.sse);
		this.sessions.onEnd = sid => this.calls.cancelSession(sid);
		this.sessions.isBusy = sid => this.calls.hasCalls(sid);
	}

	get inFlight(): ReadonlyMap<string, InFlightCall> {
		return this.calls.inFlight;
	}

	get callsServed(): number {
		return this.calls.callsServed;
	}

	get token(): string {
		return this.#token;
	}

	/** Swaps the live token; sessions bound to the old one end at once. */
	setToken(token: string): void {
		this.#token = token;
		this.#fingerprint = tokenFingerprint(token);
		this.sessions.revokeExcept(this.#fingerprint);
	}

	/** Cancels every call in flight (used on release after the grace period). */
	cancelAll(): void {
		this.calls.cancelAll();
	}

	readonly handle = async (req: Request): Promise<Response> => {
		try {
			return await this.#pipeline(req);
		} catch (err) {
			const path = requestPath(req.url);
			this.#deps.log(`a2a-bridge: internal error on ${req.method} ${path}: ${describe(err)}`);
			return refuse(this.#route(path) ?? "mcp", "internal_error");
		}
	};

	// Not async: the guards are synchronous; only the routes' handlers return promises.
	#pipeline(req: Request): Response | Promise<Response> {
		const route = this.#route(requestPath(req.url));
		if (route === null) return notFound();
		return (
			this.#guardHostOrigin(req, route) ??
			this.#guardMethod(req, route) ??
			this.#guardAuth(req, route) ??
			(route === "mcp" ? this.#mcp(req) : this.#extra(req, route))
		);
	}

	#route(path: string): Route | null {
		if (path === "/" || path === "/mcp") return "mcp";
		if (path.startsWith("/.well-known/") || OAUTH_PATHS.has(path)) return null;
		return this.#opts.routes?.[path] ? path : null;
	}

	#guardHostOrigin(req: Request, route: Route): Guard {
		const host = req.headers.get("host");
		const origin = req.headers.get("origin");
		// A client sends the same Host (and Origin) on every request: the last verdict is reused.
		const memo = this.#hostMemo;
		let r: HostOriginResult;
		if (memo !== null && memo.host === host && memo.origin === origin) r = memo.result;
		else {
			const { isLoopbackBind, allowedOrigins, bindHost } = this.#opts;
			r = checkHostOrigin(host, origin, isLoopbackBind, allowedOrigins, bindHost);
			this.#hostMemo = { host, origin, result: r };
		}
		return r.ok ? undefined : refuse(route, r.kind);
	}

	#guardMethod(req: Request, route: Route): Guard {
		const allowed: readonly string[] = route === "mcp" ? MCP_METHODS : (this.#opts.routes?.[route]?.methods ?? []);
		return allowed.includes(req.method)
			? undefined
			: refuse(route, "method_not_allowed", { allow: allowed.join(", ") });
	}

	#guardAuth(req: Request, route: Route): Guard {
		const r = checkAuth(req.headers.get("authorization"), this.#token);
		if (r.ok) return undefined;
		this.#unauthorized++;
		if (this.#unauthorized === 1 || this.#unauthorized % UNAUTHORIZED_LOG_EVERY === 0) {
			this.#deps.log(`a2a-bridge: ${this.#unauthorized} unauthorized request(s) refused so far`);
		}
		const challenge =
			r.kind === "invalid_token" ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
		return refuse(route, r.kind, { "www-authenticate": challenge });
	}

	#extra(req: Request, route: Route): Response | Promise<Response> {
		const sid = req.headers.get("mcp-session-id");
		const issued = sid !== null && this.sessions.has(sid) ? sid : null;
		const handler = this.#opts.routes?.[route];
		return handler ? handler.handle(req, { sid: issued }) : notFound();
	}

	async #mcp(req: Request): Promise<Response> {
		const pv = req.headers.get("mcp-protocol-version");
		if (pv !== null && !(SUPPORTED_VERSIONS as readonly string[]).includes(pv.trim())) {
			return rpcError("unsupported_protocol_version");
		}
		if (req.method === "DELETE") {
			const s = this.#guardSession(req);
			if (s instanceof Response) return s;
			this.sessions.delete(s.sid);
			return new Response(null, { status: 204 });
		}
		const body = await readBodyLimited(req, MAX_BODY_BYTES);
		if (!body.ok) return rpcError("body_too_large");
		const json = parseJsonBody(body.bytes);
		if (!json.ok) return rpcError("parse_error");
		const env = parseEnvelope(json.value);
		if (!env.ok) return rpcError("invalid_request", env.id);
		const msg = env.value;
		if (msg.kind === "request" && msg.method === "initialize") return this.#initialize(msg.id, msg.params);
		const session = this.#guardSession(req, msg.kind === "request" ? msg.id : null);
		if (session instanceof Response) return session;
		if (msg.kind !== "request") {
			this.#notification(msg, session);
			return new Response(null, { status: 202 });
		}
		return this.#dispatch(msg, session, req);
	}

	#guardSession(req: Request, id: RpcId | null = null): Session | Response {
		const sid = req.headers.get("mcp-session-id");
		if (sid === null || sid === "") return rpcError("session_required", id);
		const found = this.sessions.touch(sid, this.#fingerprint);
		return found.ok ? found.session : rpcError("session_not_found", id);
	}

	#initialize(id: RpcId, params: Record<string, unknown> | undefined): Response {
		const asked = params?.protocolVersion;
		const version =
			typeof asked === "string" && (SUPPORTED_VERSIONS as readonly string[]).includes(asked) ? asked : LATEST_VERSION;
		const session = this.sessions.create(this.#fingerprint, version);
		const result = {
			protocolVersion: version,
			capabilities: { tools: { listChanged: false } },
			serverInfo: { name: "omp-a2a-bridge", version: this.#deps.version },
			instructions: this.#deps.instructions,
		};
		return rpcResult(id, result, { "mcp-session-id": session.sid });
	}

	/** The catalog is about 55 KB of JSON: serialized again only when listTools hands out a new list. */
	#toolsBlob(): Blob {
		const list = this.#deps.listTools();
		if (this.#listMemo?.list !== list) this.#listMemo = { list, json: new Blob([JSON.stringify({ tools: list })]) };
		return this.#listMemo.json;
	}

	#notification(msg: Envelope, session: Session): void {
		if (msg.kind !== "notification" || msg.method !== "notifications/cancelled") return;
		const requestId = msg.params?.requestId;
		if (typeof requestId !== "string" && typeof requestId !== "number") return;
		this.calls.cancel(session.sid, requestId);
	}

	#dispatch(msg: Extract<Envelope, { kind: "request" }>, session: Session, req: Request): Response | Promise<Response> {
		switch (msg.method) {
			case "ping":
				return rpcResult(msg.id, {});
			case "tools/list":
				return rpcResultJson(msg.id, this.#toolsBlob());
			case "tools/call":
				return this.calls.start(msg.id, msg.params, session.sid, req.headers.get("accept"));
			default:
				return rpcError("method_not_found", msg.id);
		}
	}
}
