/**
 * What every extra route (`/blob`, `/host-llm`, the next one) is built from, so a route writes none of it
 * again: its refusals from its own table in the one envelope (errors.ts `routeRefusal`); a small body read
 * within a limit and the caller's identity checked once it is in (contract §16: a secret revoked or
 * rotated while the body was on its way acts on nothing); and per-token slots, so no token holds all of a
 * route's (contract §16). The gate has already checked the route, Host/Origin, the method and the token.
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

/**
 * At most `total` of something at once (uploads, downloads), each token at most its share of them now
 * (`ctx.shareOf`), so one token's flood leaves the others their part.
 */
export class TokenSlots {
	readonly #total: number;
	/** What is counted, plural, for the refusal ("uploads"). */
	readonly #what: string;
	readonly #byToken = new Map<string, number>();
	#used = 0;

	constructor(total: number, what: string) {
		this.#total = total;
		this.#what = what;
	}

	/** A slot for `token` (its release, idempotent), or the sentence saying why there is none. */
	take(token: string, ctx: Pick<RouteContext, "shareOf">): (() => void) | string {
		const share = ctx.shareOf(this.#total);
		const mine = this.#byToken.get(token) ?? 0;
		if (mine >= share) return `this token's ${share} ${this.#what} are in progress`;
		if (this.#used >= this.#total) return `${this.#total} ${this.#what} are in progress`;
		this.#used++;
		this.#byToken.set(token, mine + 1);
		let held = true;
		return () => {
			if (!held) return;
			held = false;
			this.#used--;
			const left = (this.#byToken.get(token) ?? 1) - 1;
			if (left > 0) this.#byToken.set(token, left);
			else this.#byToken.delete(token);
		};
	}
}
