/**
 * The fetch-shaped core: `handle(Request, Connection) → Response`. It knows HTTP and JSON-RPC only; the host is
 * reached through `BridgeDeps`. Guards run in the order of contract §4 (mirrored in
 * docs/protocol.md): route, Host/Origin, method, auth, then the route itself.
 */
import type { Identity } from "../config/auth.ts";
import { errorDetail } from "../text/error-text.ts";
import { streamOrJson } from "./answers.ts";
import { readMessage } from "./body.ts";
import { CallTable, MAX_CALLS_IN_FLIGHT } from "./calls.ts";
import { isClientAbort } from "./client-abort.ts";
import { SYSTEM_CLOCK } from "./clock.ts";
import { notFound, rpcErrorData } from "./errors.ts";
import { eraOf, MAX_BODY_BYTES, SERVER_NAME, unsupportedData } from "./facts.ts";
import { Gate, type RouteName, recheck, refuse } from "./gate.ts";
import { SLOT_KINDS, type SlotBounds, TokenHoldings } from "./holdings.ts";
import { NO_CONNECTION } from "./idle.ts";
import { LegacyMcp } from "./legacy.ts";
import { ModernMcp } from "./modern.ts";
import { serveRoute } from "./route-kit.ts";
import { MAX_SESSIONS, SessionTable } from "./sessions.ts";
import { requestPath } from "./target.ts";
import { TASK_WINDOW_MS } from "./task-wire.ts";
import { TaskStore } from "./tasks.ts";
import type {
	BridgeDeps,
	Connection,
	InFlightCall,
	RouteContext,
	ServerOptions,
	SlotBound,
	SlotKind,
} from "./types.ts";

export type { ExtraRoute } from "./types.ts";

/** Why every slot of a revoked or rotated token ends (a task keeps it as its status message). */
const TOKEN_ENDED = "its token was revoked or rotated";

/**
 * The bounds of every slot kind: the core's own, what each extra route declares, then the host adapter's
 * (approval prompts; none without it). Tasks and digest jobs per file version are bounded by their owners.
 */
function slotBounds(opts: ServerOptions): SlotBounds {
	const bounds: Record<SlotKind, SlotBound> = Object.fromEntries(SLOT_KINDS.map(k => [k, null])) as never;
	bounds.sessions = MAX_SESSIONS;
	bounds.calls = MAX_CALLS_IN_FLIGHT;
	bounds.prompts = { each: 0, total: 0 };
	for (const route of Object.values(opts.routes ?? {})) Object.assign(bounds, route.bounds);
	return Object.assign(bounds, opts.bounds);
}

export class BridgeServer {
	/** What every token holds, of every kind (contract §19): revocation ends it all here. */
	readonly holdings: TokenHoldings;
	readonly sessions: SessionTable;
	readonly calls: CallTable;
	readonly tasks: TaskStore;
	readonly #gate: Gate;
	readonly #legacy: LegacyMcp;
	readonly #modern: ModernMcp;
	readonly #deps: BridgeDeps;
	readonly #opts: ServerOptions;

	constructor(deps: BridgeDeps, opts: ServerOptions) {
		this.#deps = deps;
		this.#opts = opts;
		const clock = deps.clock ?? SYSTEM_CLOCK;
		this.#gate = new Gate(opts, deps.log);
		const holdings = new TokenHoldings(slotBounds(opts), () => this.#gate.tokens.size);
		this.holdings = holdings;
		const calls = new CallTable(deps, holdings);
		this.calls = calls;
		this.tasks = new TaskStore({ clock, holdings });
		this.sessions = new SessionTable({
			clock,
			holdings,
			...(opts.sessionTtlMs ? { ttlMs: opts.sessionTtlMs } : {}),
			onEnd: sid => calls.cancelSession(sid),
			isBusy: sid => calls.hasCalls(sid),
		});
		const text = deps.instructions;
		const mcp = {
			calls,
			serverInfo: { name: SERVER_NAME, version: deps.version },
			instructions: typeof text === "function" ? text : () => text,
			listTools: () => deps.listTools(),
			unavailable: (method: "tools/list" | "tools/call") => deps.unavailable?.(method) ?? null,
			answerPort: (params: Record<string, unknown> | undefined, req: Request) =>
				streamOrJson(params, req.headers.get("accept"), opts.sse, clock),
		};
		this.#legacy = new LegacyMcp({ ...mcp, sessions: this.sessions });
		const taskWindowMs = opts.taskWindowMs ?? TASK_WINDOW_MS;
		this.#modern = new ModernMcp({ ...mcp, tasks: this.tasks, clock, taskWindowMs });
	}

	get inFlight(): ReadonlyMap<string, InFlightCall> {
		return this.calls.inFlight;
	}

	get callsServed(): number {
		return this.calls.callsServed;
	}

	get ownerSecret(): string {
		return this.#gate.ownerSecret;
	}

	/** Names of the live tokens, `owner` first. */
	tokenNames(): string[] {
		return this.#gate.tokens.names();
	}

	/** Every live secret (the audit scrubs them from its lines). */
	get secrets(): string[] {
		return this.#gate.tokens.secrets();
	}

	secretOf(name: string): string | undefined {
		return this.#gate.tokens.secret(name);
	}

	/**
	 * Adds a token, or replaces its secret (`/a2a rotate`). Everything a replaced token holds ends at once
	 * (the registry: sessions, calls, tasks, transfers, digest waits, prompts); every other token is untouched.
	 */
	setToken(name: string, secret: string): void {
		const replacing = this.#gate.tokens.secret(name) !== undefined;
		this.#gate.tokens.set(name, secret);
		if (replacing) this.holdings.endToken(name, TOKEN_ENDED);
	}

	/** Removes a token: refused from the next request on, everything it holds ended now. */
	revokeToken(name: string): boolean {
		const had = this.#gate.tokens.remove(name);
		this.holdings.endToken(name, TOKEN_ENDED);
		return had;
	}

	/** Cancels every call in flight (used on release after the grace period). */
	cancelAll(): void {
		this.tasks.cancelAll("the endpoint stopped");
		this.calls.cancelAll();
	}

	/** Cancels every running task: once the endpoint stops, no one can ever fetch their results. */
	cancelTasks(): void {
		this.tasks.cancelAll("the endpoint stopped");
	}

	/** `conn` is the request's connection handle from the listener; unit tests may leave it out. */
	readonly handle = async (req: Request, conn: Connection = NO_CONNECTION): Promise<Response> => {
		try {
			return await this.#pipeline(req, conn);
		} catch (err) {
			const path = requestPath(req.url);
			// A client that hangs up mid-body is not a bridge failure; its answer goes nowhere anyway.
			this.#deps.log(
				isClientAbort(req, err)
					? `a2a-bridge: client aborted ${req.method} ${path} before its request was complete`
					: `a2a-bridge: internal error on ${req.method} ${path}: ${errorDetail(err)}`,
			);
			return refuse(this.#gate.routeName(path) ?? "mcp", "internal_error");
		}
	};

	// Not async: the guards are synchronous; only the routes' handlers return promises.
	#pipeline(req: Request, conn: Connection): Response | Promise<Response> {
		const gate = this.#gate;
		const name = gate.routeName(requestPath(req.url));
		if (name === null) return notFound();
		const refused = gate.hostOrigin(req, name) ?? gate.method(req, name);
		if (refused) return refused;
		const who = gate.auth(req, name);
		if (who instanceof Response) return who;
		return name === "mcp" ? this.#mcp(req, who, conn) : this.#extra(req, name, who, conn);
	}

	/** One endpoint, two eras, chosen per request by MCP-Protocol-Version (contract §13). */
	#mcp(req: Request, who: Identity, conn: Connection): Promise<Response> | Response {
		const header = req.headers.get("mcp-protocol-version");
		const era = eraOf(header);
		if (era === "unsupported") return this.#unsupported(req, header ?? "");
		return era === "modern" && req.method === "POST"
			? this.#modern.handle(req, who, conn)
			: this.#legacy.handle(req, who, conn);
	}

	/** -32022 naming the request's own id whenever its body is a readable request (null otherwise). */
	async #unsupported(req: Request, header: string): Promise<Response> {
		// Only the id is read, to name it in the refusal: nothing acts on the message, so no re-check.
		const msg = req.method === "POST" ? await readMessage(req, MAX_BODY_BYTES, null) : null;
		const id = msg !== null && !(msg instanceof Response) && msg.kind === "request" ? msg.id : null;
		return rpcErrorData("unsupported_protocol_version", id, unsupportedData(header));
	}

	#extra(req: Request, name: RouteName, who: Identity, conn: Connection): Response | Promise<Response> {
		const route = this.#opts.routes?.[name];
		if (!route) return notFound();
		const sid = req.headers.get("mcp-session-id");
		// Only a session this same token opened is named in the route's audit record.
		const session = sid === null ? undefined : this.sessions.peek(sid);
		const own = session?.secretDigest === who.secretDigest ? session : undefined;
		const ctx: RouteContext = {
			sid: own?.sid ?? null,
			tokenName: who.tokenName,
			client: own?.client ?? null,
			conn,
			...(who.ended ? { ended: who.ended } : {}),
			recheck: () => recheck(who, name),
			take: (kind, onEnd, joins) => this.holdings.take(kind, who, onEnd, joins),
		};
		return serveRoute(route, req, ctx);
	}
}
