/**
 * The fetch-shaped core: `handle(Request) → Response`. It knows HTTP and JSON-RPC only; the host is
 * reached through `BridgeDeps`. Guards run in the order of contract §4 (mirrored in
 * docs/protocol.md); each returns a Response to answer with, or nothing to go on.
 */
import { checkAuth, checkHostOrigin, tokenFingerprint } from "./auth.ts";
import { ERRORS, type ErrorKind, notFound, REALM, type RpcId, rpcError, rpcResult } from "./errors.ts";
import { type Envelope, parseEnvelope, parseJsonBody } from "./jsonrpc.ts";
import { acceptsEventStream, openSseCall, type ProgressToken, type SseCall, type SseTimings } from "./progress.ts";
import { type Session, SessionTable } from "./sessions.ts";
import { requestTarget } from "./target.ts";

export const SUPPORTED_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"] as const;
export const LATEST_VERSION = "2025-11-25";
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MAX_CALLS_IN_FLIGHT = 256;
const UNAUTHORIZED_LOG_EVERY = 50;

export type ContentBlock =
	| { type: "text"; text: string }
	| { type: "image"; data: string; mimeType: string }
	| Record<string, unknown>;

export interface McpTool {
	name: string;
	description: string;
	inputSchema: Record<string, unknown>;
	annotations?: Record<string, boolean>;
}

export interface ToolCallOutcome {
	content: ContentBlock[];
	isError: boolean;
}

export interface ToolCallRequest {
	callId: string;
	name: string;
	args: Record<string, unknown>;
	signal: AbortSignal;
	sid: string;
	/** Present in SSE mode: the call's cumulative output so far. */
	onProgress?: (text: string) => void;
	/** Present in SSE mode: the host backgrounded the call and stopped forwarding output. */
	onBackgrounded?: () => void;
}

/** Audit seam: `start` is awaited before the tool runs, `done` before the response goes out. */
export interface CallAudit {
	start(call: { id: string; sid: string; tool: string; args: unknown }): Promise<void>;
	done(call: {
		id: string;
		sid: string;
		tool: string;
		args: unknown;
		isError: boolean;
		cancelled?: boolean;
	}): Promise<void>;
}

export interface BridgeDeps {
	version: string;
	instructions: string;
	listTools(): McpTool[];
	callTool(req: ToolCallRequest): Promise<ToolCallOutcome>;
	audit?: CallAudit;
	/** One line to host stderr (never stdout: that is the host's rpc channel). */
	log(line: string): void;
	now?: () => number;
}

/** Extra authenticated routes (`/blob`, `/host-llm`) plugged in by their own modules. */
export interface ExtraRoute {
	methods: readonly string[];
	handle(req: Request, ctx: { sid: string | null }): Promise<Response>;
}

export interface ServerOptions {
	token: string;
	bindHost: string;
	isLoopbackBind: boolean;
	allowedOrigins: readonly string[];
	routes?: Record<string, ExtraRoute>;
	/** SSE timing overrides (tests only). */
	sse?: SseTimings;
	/** Idle TTL override (tests only; the default is SESSION_TTL_MS). */
	sessionTtlMs?: number;
}

export interface InFlightCall {
	id: string;
	sid: string;
	tool: string;
	startedAt: number;
	controller: AbortController;
	cancelled: boolean;
}

type Guard = Response | undefined;
type Route = "mcp" | string;

const OAUTH_PATHS = new Set(["/authorize", "/token", "/register"]);
const MCP_METHODS = ["POST", "DELETE"] as const;

const callKey = (sid: string, id: RpcId): string => `${sid}\u0000${typeof id}:${String(id)}`;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class BridgeServer {
	readonly sessions: SessionTable;
	readonly inFlight = new Map<string, InFlightCall>();
	callsServed = 0;
	#token: string;
	#fingerprint: string;
	#unauthorized = 0;
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
		this.sessions.onEnd = sid => this.#cancelSession(sid);
		this.sessions.isBusy = sid => {
			for (const c of this.inFlight.values()) if (c.sid === sid) return true;
			return false;
		};
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
		for (const call of this.inFlight.values()) this.#cancel(call);
	}

	readonly handle = async (req: Request): Promise<Response> => {
		try {
			return await this.#pipeline(req);
		} catch (err) {
			this.#deps.log(`a2a-bridge: internal error on ${req.method} ${safePath(req.url)}: ${describe(err)}`);
			return rpcError("internal_error");
		}
	};

	async #pipeline(req: Request): Promise<Response> {
		const url = requestTarget(req.url);
		const route = this.#route(url.pathname);
		if (route === null) return notFound();
		return (
			this.#guardHostOrigin(req) ??
			this.#guardMethod(req, route) ??
			this.#guardAuth(req) ??
			(route === "mcp" ? await this.#mcp(req) : await this.#extra(req, route))
		);
	}

	#route(path: string): Route | null {
		if (path === "/" || path === "/mcp") return "mcp";
		if (path.startsWith("/.well-known/") || OAUTH_PATHS.has(path)) return null;
		return this.#opts.routes?.[path] ? path : null;
	}

	#guardHostOrigin(req: Request): Guard {
		const r = checkHostOrigin(
			req.headers.get("host"),
			req.headers.get("origin"),
			this.#opts.isLoopbackBind,
			this.#opts.allowedOrigins,
			this.#opts.bindHost,
		);
		return r.ok ? undefined : rpcError(r.kind);
	}

	#guardMethod(req: Request, route: Route): Guard {
		const allowed: readonly string[] = route === "mcp" ? MCP_METHODS : (this.#opts.routes?.[route]?.methods ?? []);
		return allowed.includes(req.method)
			? undefined
			: rpcError("method_not_allowed", null, { allow: allowed.join(", ") });
	}

	#guardAuth(req: Request): Guard {
		const r = checkAuth(req.headers.get("authorization"), this.#token);
		if (r.ok) return undefined;
		this.#unauthorized++;
		if (this.#unauthorized === 1 || this.#unauthorized % UNAUTHORIZED_LOG_EVERY === 0) {
			this.#deps.log(`a2a-bridge: ${this.#unauthorized} unauthorized request(s) refused so far`);
		}
		const challenge =
			r.kind === "invalid_token" ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
		return rpcError(r.kind, null, { "www-authenticate": challenge });
	}

	async #extra(req: Request, route: Route): Promise<Response> {
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

	#notification(msg: Envelope, session: Session): void {
		if (msg.kind !== "notification" || msg.method !== "notifications/cancelled") return;
		const requestId = msg.params?.requestId;
		if (typeof requestId !== "string" && typeof requestId !== "number") return;
		const call = this.inFlight.get(callKey(session.sid, requestId));
		if (call) this.#cancel(call);
	}

	async #dispatch(msg: Extract<Envelope, { kind: "request" }>, session: Session, req: Request): Promise<Response> {
		switch (msg.method) {
			case "ping":
				return rpcResult(msg.id, {});
			case "tools/list":
				return rpcResult(msg.id, { tools: this.#deps.listTools() });
			case "tools/call":
				return this.#toolsCall(msg.id, msg.params, session, req);
			default:
				return rpcError("method_not_found", msg.id);
		}
	}

	async #toolsCall(
		id: RpcId,
		params: Record<string, unknown> | undefined,
		session: Session,
		req: Request,
	): Promise<Response> {
		const name = params?.name;
		const args = params && "arguments" in params ? params.arguments : {};
		if (typeof name !== "string" || !isRecord(args)) return rpcError("invalid_params", id);
		const key = callKey(session.sid, id);
		if (this.inFlight.size >= MAX_CALLS_IN_FLIGHT || this.inFlight.has(key)) {
			return rpcError(this.inFlight.has(key) ? "invalid_request" : "server_busy", id);
		}
		const call: InFlightCall = {
			id: crypto.randomUUID(),
			sid: session.sid,
			tool: name,
			startedAt: this.#now(),
			controller: new AbortController(),
			cancelled: false,
		};
		this.inFlight.set(key, call);
		const token = progressTokenOf(params);
		const sse =
			token !== null && acceptsEventStream(req.headers.get("accept")) ? openSseCall(token, this.#opts.sse) : null;
		const run = this.#runCall(call, key, args, sse);
		if (sse === null) {
			const outcome = await run;
			if (outcome === null) return rpcError("request_cancelled", id);
			return rpcResult(id, { content: outcome.content, isError: outcome.isError });
		}
		run.then(
			outcome =>
				sse.finish(
					outcome === null
						? null
						: { jsonrpc: "2.0", id, result: { content: outcome.content, isError: outcome.isError } },
				),
			err => {
				this.#deps.log(`a2a-bridge: internal error in tools/call '${name}': ${describe(err)}`);
				const { code, message } = ERRORS.internal_error;
				return sse.finish({ jsonrpc: "2.0", id, error: { code, message } });
			},
		);
		return sse.response;
	}

	/** Runs one call between its two audit records; resolves null when the call was cancelled. */
	async #runCall(
		call: InFlightCall,
		key: string,
		args: Record<string, unknown>,
		sse: SseCall | null,
	): Promise<ToolCallOutcome | null> {
		const record = { id: call.id, sid: call.sid, tool: call.tool, args };
		try {
			await this.#deps.audit?.start(record);
			let outcome: ToolCallOutcome | null;
			try {
				const work = this.#deps.callTool({
					callId: call.id,
					name: call.tool,
					args,
					signal: call.controller.signal,
					sid: call.sid,
					...(sse
						? { onProgress: (text: string) => sse.progress(text), onBackgrounded: () => sse.backgrounded() }
						: {}),
				});
				outcome = await raceAbort(work, call.controller.signal);
			} catch (err) {
				// Every start gets its done, even when the bridge itself fails (answered 500 at the edge).
				await this.#deps.audit?.done({ ...record, isError: true });
				throw err;
			}
			await this.#deps.audit?.done({
				...record,
				isError: outcome === null || outcome.isError,
				...(call.cancelled ? { cancelled: true } : {}),
			});
			this.callsServed++;
			return outcome;
		} finally {
			this.inFlight.delete(key);
		}
	}

	#cancel(call: InFlightCall): void {
		call.cancelled = true;
		call.controller.abort(new Error("request cancelled"));
	}

	#cancelSession(sid: string): void {
		for (const call of this.inFlight.values()) if (call.sid === sid) this.#cancel(call);
	}
}

function progressTokenOf(params: Record<string, unknown> | undefined): ProgressToken | null {
	const meta = params?._meta;
	if (!isRecord(meta)) return null;
	const t = meta.progressToken;
	return typeof t === "string" || (typeof t === "number" && Number.isFinite(t)) ? t : null;
}

/** Resolves with the promise's value, or null as soon as the signal aborts (the work may go on). */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T | null> {
	if (signal.aborted) return Promise.resolve(null);
	return new Promise<T | null>((resolve, reject) => {
		const onAbort = () => resolve(null);
		signal.addEventListener("abort", onAbort, { once: true });
		work.then(
			v => {
				signal.removeEventListener("abort", onAbort);
				resolve(signal.aborted ? null : v);
			},
			e => {
				signal.removeEventListener("abort", onAbort);
				if (signal.aborted) resolve(null);
				else reject(e);
			},
		);
	});
}

export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; kind: ErrorKind };

/**
 * Reads at most `max` bytes. Content-Length is trusted only without Transfer-Encoding
 * (RFC 9112 §6.3); otherwise the stream is counted and dropped the moment it crosses the limit.
 */
export async function readBodyLimited(req: Request, max: number): Promise<BodyRead> {
	const declared = req.headers.get("content-length");
	if (declared !== null && req.headers.get("transfer-encoding") === null && Number(declared) > max) {
		return { ok: false, kind: "body_too_large" };
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
			return { ok: false, kind: "body_too_large" };
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

function safePath(url: string): string {
	return requestTarget(url).pathname;
}

function describe(err: unknown): string {
	return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
