/**
 * The HTTP guards of contract §4 that run before any route: the route table, Host/Origin, the
 * method and the Bearer token. Each returns a Response to answer with, or nothing to go on.
 */
import { authenticate, checkHostOrigin, type HostOriginResult, type Identity, TokenSet } from "../config/auth.ts";
import { OWNER } from "../config/tokens.ts";
import { type ErrorKind, INVALID_TOKEN_CHALLENGE, REALM, routeError, rpcError } from "./errors.ts";
import type { ServerOptions } from "./types.ts";

const UNAUTHORIZED_LOG_EVERY = 50;
const OAUTH_PATHS = new Set(["/authorize", "/token", "/register"]);
const MCP_METHODS = ["POST", "DELETE"] as const;

export type Guard = Response | undefined;
/** Which route a request is for: "mcp" for the MCP endpoint, otherwise the path of an extra route. */
export type RouteName = "mcp" | string;

/** Pipeline refusals speak the route's language: JSON-RPC on MCP, `{error, code}` elsewhere. */
export const refuse = (routeName: RouteName, kind: ErrorKind, headers: Record<string, string> = {}): Response =>
	routeName === "mcp" ? rpcError(kind, null, headers) : routeError(kind, headers);

/**
 * Contract §16: the identity checked on the headers is checked again once the body is in, before any
 * work starts; a secret revoked or rotated meanwhile gets the 401 a new request with it would get. Called
 * only where a body is read: `readMessage` (both eras) and the routes' body duty (route-kit.ts).
 */
export function recheck(who: { ended?: AbortSignal }, routeName: RouteName): Response | undefined {
	return who.ended?.aborted
		? refuse(routeName, "invalid_token", { "www-authenticate": INVALID_TOKEN_CHALLENGE })
		: undefined;
}

export class Gate {
	/** Every live token by name; the owner's is `owner`. */
	readonly tokens: TokenSet;
	#unauthorized = 0;
	#hostMemo: { host: string | null; origin: string | null; result: HostOriginResult } | null = null;
	readonly #opts: ServerOptions;
	readonly #log: (line: string) => void;

	constructor(opts: ServerOptions, log: (line: string) => void) {
		this.#opts = opts;
		this.#log = log;
		this.tokens = new TokenSet([{ name: OWNER, token: opts.ownerSecret }, ...(opts.tokens ?? [])]);
	}

	/** The owner token's secret. */
	get ownerSecret(): string {
		return this.tokens.secret(OWNER) ?? "";
	}

	routeName(path: string): RouteName | null {
		if (path === "/" || path === "/mcp") return "mcp";
		if (path.startsWith("/.well-known/") || OAUTH_PATHS.has(path)) return null;
		return this.#opts.routes?.[path] ? path : null;
	}

	hostOrigin(req: Request, routeName: RouteName): Guard {
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
		return r.ok ? undefined : refuse(routeName, r.code);
	}

	method(req: Request, routeName: RouteName): Guard {
		const allowed: readonly string[] =
			routeName === "mcp" ? MCP_METHODS : (this.#opts.routes?.[routeName]?.methods ?? []);
		return allowed.includes(req.method)
			? undefined
			: refuse(routeName, "method_not_allowed", { allow: allowed.join(", ") });
	}

	/** The caller's token name and secret digest, or the 401 to answer with. */
	auth(req: Request, routeName: RouteName): Identity | Response {
		const r = authenticate(req.headers.get("authorization"), this.tokens);
		if (r.ok) return r.who;
		this.#unauthorized++;
		if (this.#unauthorized === 1 || this.#unauthorized % UNAUTHORIZED_LOG_EVERY === 0) {
			this.#log(`a2a-bridge: ${this.#unauthorized} unauthorized request(s) refused so far`);
		}
		const challenge = r.code === "invalid_token" ? INVALID_TOKEN_CHALLENGE : `Bearer realm="${REALM}"`;
		return refuse(routeName, r.code, { "www-authenticate": challenge });
	}
}
