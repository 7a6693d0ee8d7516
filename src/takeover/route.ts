/** `/host-llm`: the HTTP face of the takeover switch (contract §8). */

import { INVALID_TOKEN_CHALLENGE, routeError } from "../core/errors.ts";
import type { ExtraRoute } from "../core/types.ts";
import type { Takeover } from "./takeover.ts";

const MAX_BODY_BYTES = 1024;

/** The body as text, or null past MAX_BODY_BYTES (counted on the stream: no Content-Length is trusted). */
async function readSmallBody(req: Request): Promise<string | null> {
	const chunks: Uint8Array[] = [];
	let size = 0;
	for await (const chunk of req.body ?? []) {
		size += chunk.byteLength;
		if (size > MAX_BODY_BYTES) return null;
		chunks.push(chunk);
	}
	return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Each `/host-llm` refusal code and its HTTP status; docs/protocol.md carries the same rows. @internal */
export const HOST_LLM_ERRORS = { invalid_body: 400, cannot_arm: 409, body_too_large: 413 } as const;
type HostLlmCode = keyof typeof HOST_LLM_ERRORS;

/** `{error, code}` like every other route's refusal; `extra` rides along (the state, on 409). */
const error = (code: HostLlmCode, message: string, extra: object = {}): Response =>
	Response.json({ ...extra, error: message, code }, { status: HOST_LLM_ERRORS[code] });

/** `GET /host-llm` → state; `POST {"enabled": boolean}` → toggle (contract §8). */
export function createHostLlmRoute(takeover: Takeover): ExtraRoute {
	return {
		methods: ["GET", "POST"],
		async handle(req, { sid, tokenName, ended }) {
			if (req.method === "GET") return Response.json(takeover.state());
			const text = await readSmallBody(req);
			if (text === null) return error("body_too_large", `request body larger than ${MAX_BODY_BYTES} bytes`);
			// Contract §16: a secret revoked or rotated while the body was on its way switches nothing.
			if (ended?.aborted) return routeError("invalid_token", { "www-authenticate": INVALID_TOKEN_CHALLENGE });
			let body: unknown;
			try {
				body = JSON.parse(text);
			} catch {
				return error("invalid_body", 'body must be JSON: {"enabled": true|false}');
			}
			const enabled = (body as { enabled?: unknown } | null)?.enabled;
			if (typeof body !== "object" || Array.isArray(body) || typeof enabled !== "boolean") {
				return error("invalid_body", "field 'enabled' must be a boolean");
			}
			const r = takeover.toggle(enabled, sid, tokenName);
			return r.ok ? Response.json(r.value) : error(r.code, r.message, takeover.state());
		},
	};
}
