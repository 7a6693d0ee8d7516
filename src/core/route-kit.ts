/**
 * What every extra route (`/blob`, `/host-llm`, the next one) is built from, so a route writes none of it
 * again: its refusals from its own table in the one envelope (errors.ts `routeRefusal`); a small body read
 * within a limit and the caller's identity checked once it is in (contract §16: a secret revoked or
 * rotated while the body was on its way acts on nothing). A route's slots come from the one registry of what
 * tokens hold (core/holdings.ts, `RouteContext.take`). The gate has already checked the route, Host/Origin,
 * the method and the token.
 */
import { readBodyLimited } from "./body.ts";
import { type RefusalExtra, routeRefusal } from "./errors.ts";
import type { RouteContext } from "./types.ts";

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
 * route's own 413 past the limit, or the 401 of a caller whose secret ended while the body arrived.
 */
export async function readRouteBody(
	req: Request,
	ctx: RouteContext,
	max: number,
	refuse: Refuse<"body_too_large">,
): Promise<Uint8Array | Response> {
	const body = await readBodyLimited(req, max);
	if (!body.ok) return refuse("body_too_large", `request body larger than ${max} bytes`);
	return ctx.recheck() ?? body.bytes;
}
