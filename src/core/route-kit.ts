/**
 * What every extra route (`/blob`, `/host-llm`, the next one) is built from, so a route writes none of it
 * again: its refusals from its own table in the one envelope (errors.ts `routeRefusal`); a small body read
 * within a limit and the caller's identity checked once it is in, which the pipeline does by default, or a
 * streamed body watched the same way (contract §16: a secret revoked or rotated while the body was on its
 * way acts on nothing). A route's slots come from the one registry of what
 * tokens hold (core/holdings.ts, `RouteContext.take`). The gate has already checked the route, Host/Origin,
 * the method and the token.
 */
import { readBodyLimited } from "./body.ts";
import { type RefusalExtra, routeRefusal } from "./errors.ts";
import type { ExtraRoute, RouteContext, Settled } from "./types.ts";

/** A route's refusal codes and their HTTP statuses; docs/protocol.md carries each table (held by a test). */
type RefusalTable = Readonly<Record<string, number>>;

/** Builds a refusal of `code` with `message`; `headers` and `extra` ride along. */
export type Refuse<Code extends string> = (
	code: Code,
	message: string,
	headers?: Record<string, string>,
	extra?: RefusalExtra,
) => Response;

/** The refusal builder of a route: the status comes from the route's own table, the envelope from errors.ts. */
export function refusalsOf<T extends RefusalTable>(table: T): Refuse<keyof T & string> {
	return (code, message, headers = {}, extra = {}) =>
		routeRefusal(table[code] as number, code, message, headers, extra);
}

/**
 * The body of a small request (a switch, a form), at most `max` bytes, or the response to send: the
 * route's own 413 past the limit, or the 401 of a caller whose secret ended while the body arrived:
 * `serveRoute` does this for every route by default (`ExtraRoute.body`). @internal
 */
export async function readRouteBody(
	req: Request,
	ctx: RouteContext,
	max: number,
	refuse: (code: "body_too_large", message: string) => Response,
): Promise<Uint8Array | Response> {
	const body = await readBodyLimited(req, max);
	if (!body.ok) return refuse(body.code, body.why);
	return ctx.recheck() ?? body.bytes;
}

/** Runs `route` for `req` with its duties done first (`ExtraRoute.body`), as the pipeline does for every route. */
export async function serveRoute(route: ExtraRoute, req: Request, ctx: RouteContext): Promise<Response> {
	const duty = route.body;
	// Opted out by name (the route streams its body), or a method that carries none.
	if (duty === "stream" || req.method === "GET" || req.method === "HEAD") return route.handle(req, ctx);
	const body = await readRouteBody(req, ctx, duty.max, duty.refuse);
	return body instanceof Response ? body : route.handle(req, { ...ctx, body });
}

/** How a streamed body went: what `pipe` gave or threw, and whether the caller's secret ended on its way. */
export interface Watched<T> {
	piped: Settled<T>;
	/** The secret ended while the body came in or by the time it was in: nothing of the body may act. */
	ended: boolean;
}

/**
 * For a route that streams its body (`body: "stream"`): a secret ending while `pipe` runs calls `cut`, and the
 * caller is re-checked once the body is in (contract §16). `pipe` starts before this first yields.
 */
export async function watchIdentity<T>(
	ended: AbortSignal | undefined,
	cut: () => void,
	pipe: () => Promise<T>,
): Promise<Watched<T>> {
	if (ended?.aborted) cut();
	ended?.addEventListener("abort", cut, { once: true });
	let piped: Watched<T>["piped"];
	try {
		piped = { ok: true, value: await pipe() };
	} catch (error) {
		piped = { ok: false, error };
	} finally {
		ended?.removeEventListener("abort", cut);
	}
	return { piped, ended: ended?.aborted === true };
}
