/** A route context as the server fills it (src/core/server.ts #extra), for calling a route's `handle` directly. */
import { recheck } from "../../src/core/gate.ts";
import { SLOT_KINDS, type SlotBounds, TokenHoldings } from "../../src/core/holdings.ts";
import { NO_CONNECTION } from "../../src/core/idle.ts";
import type { RouteContext } from "../../src/core/types.ts";

/** Room for everything: each kind bounded far above what a unit test takes. */
const ROOMY = Object.fromEntries(SLOT_KINDS.map(k => [k, 1 << 20])) as unknown as SlotBounds;

/**
 * The owner without a session on no connection; its slots come from `holdings` (by default a registry of its
 * own with room for everything, one live token); `over` changes any part.
 */
export function routeCtx(
	over: Partial<Omit<RouteContext, "recheck">> = {},
	holdings = new TokenHoldings(ROOMY, () => 1),
): RouteContext {
	const base = { sid: null, tokenName: "owner", client: null, conn: NO_CONNECTION, ...over };
	const ctx: RouteContext = {
		take: (kind, onEnd, joins) => holdings.take(kind, base, onEnd, joins),
		...base,
		recheck: () => recheck(base, "/route"),
	};
	return ctx;
}
