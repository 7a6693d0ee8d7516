/** A route context as the server fills it (src/core/server.ts #extra), for calling a route's `handle` directly. */
import { identityEnded } from "../../src/core/gate.ts";
import { NO_CONNECTION } from "../../src/core/idle.ts";
import type { RouteContext } from "../../src/core/types.ts";

/** The owner without a session on no connection, every slot its own; `over` changes any part. */
export function routeCtx(over: Partial<Omit<RouteContext, "recheck">> = {}): RouteContext {
	const ctx = { sid: null, tokenName: "owner", client: null, conn: NO_CONNECTION, shareOf: (t: number) => t, ...over };
	return { ...ctx, recheck: () => identityEnded(ctx, "/route") };
}
