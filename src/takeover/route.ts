/** `/host-llm`: the HTTP face of the takeover switch (contract §8), built from the route kit. */

import { refusalsOf } from "../core/route-kit.ts";
import type { ExtraRoute } from "../core/types.ts";
import type { Takeover } from "./takeover.ts";

/** A toggle body is `{"enabled": …}`: 1 KiB is ample (MCP bodies have core/facts.ts's 4 MiB MAX_BODY_BYTES). */
const MAX_TOGGLE_BYTES = 1024;

/** Each `/host-llm` refusal code and its HTTP status; docs/protocol.md carries the same rows. @internal */
export const HOST_LLM_ERRORS = { invalid_body: 400, cannot_arm: 409, body_too_large: 413, audit_budget: 429 } as const;
const refuse = refusalsOf(HOST_LLM_ERRORS);

/**
 * `GET /host-llm` → state; `POST {"enabled": boolean}` → toggle (contract §8). `admit` says whether the caller's
 * audit budget pays for the toggle's record (0), else in how many ms it would (contract §19).
 */
export function createHostLlmRoute(
	takeover: Takeover,
	admit: (tokenName: string, sid: string | null) => number = () => 0,
): ExtraRoute {
	return {
		methods: ["GET", "POST"],
		// The pipeline reads the toggle's body within the bound and checks the caller once it is in.
		body: { max: MAX_TOGGLE_BYTES, refuse },
		async handle(req, ctx) {
			if (req.method === "GET") return Response.json(takeover.state());
			let body: unknown;
			try {
				body = JSON.parse(new TextDecoder().decode(ctx.body));
			} catch {
				return refuse("invalid_body", 'body must be JSON: {"enabled": true|false}');
			}
			const enabled = (body as { enabled?: unknown } | null)?.enabled;
			if (typeof body !== "object" || Array.isArray(body) || typeof enabled !== "boolean") {
				return refuse("invalid_body", "field 'enabled' must be a boolean");
			}
			const wait = admit(ctx.tokenName, ctx.sid);
			if (wait > 0) {
				const s = Math.ceil(wait / 1000);
				const message = `this token's audit budget is spent: the switch is refused for about ${s} s`;
				return refuse("audit_budget", message, { "retry-after": String(s) });
			}
			const r = takeover.toggle(enabled, ctx.sid, ctx.tokenName);
			return r.ok ? Response.json(r.value) : refuse(r.code, r.why, {}, { ...takeover.state() });
		},
	};
}
