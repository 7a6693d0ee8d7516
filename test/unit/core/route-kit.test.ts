/**
 * The route kit (src/core/route-kit.ts): one envelope for every route refusal, a small body read within its
 * limit and the identity checked once it is in. Checked on the responses a route sends.
 */
import { describe, expect, test } from "bun:test";
import { readRouteBody, refusalsOf } from "../../../src/core/route-kit.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

const TABLE = { body_too_large: 413, busy: 503 } as const;
const refuse = refusalsOf(TABLE);

describe("refusalsOf", () => {
	test("{error, code, ...extra} at the status the table gives the code, headers kept", async () => {
		const res = refuse("busy", "try later", { "retry-after": "1" }, { slots: 2 });
		expect(res.status).toBe(503);
		expect(res.headers.get("content-type")).toBe("application/json");
		expect(res.headers.get("retry-after")).toBe("1");
		expect(await res.text()).toBe('{"error":"try later","code":"busy","slots":2}');
	});
});

describe("readRouteBody", () => {
	const post = (body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
		new Request("http://127.0.0.1/x", { method: "POST", body, headers });
	const chunked = (...parts: string[]) =>
		new ReadableStream<Uint8Array>({
			start(c) {
				for (const p of parts) c.enqueue(new TextEncoder().encode(p));
				c.close();
			},
		});

	test("a body within the limit -> its bytes (16 bytes, limit 16)", async () => {
		const got = await readRouteBody(post("x".repeat(16)), routeCtx(), 16, refuse);
		expect(got instanceof Response ? got.status : new TextDecoder().decode(got)).toBe("x".repeat(16));
	});

	test("one byte past the limit, declared or counted on a chunked stream -> the route's 413", async () => {
		for (const req of [post("x".repeat(17)), post(chunked("x".repeat(10), "x".repeat(7)))]) {
			const got = await readRouteBody(req, routeCtx(), 16, refuse);
			expect(got).toBeInstanceOf(Response);
			if (!(got instanceof Response)) continue;
			expect(got.status).toBe(413);
			expect(await got.json()).toEqual({ error: "request body larger than 16 bytes", code: "body_too_large" });
		}
	});

	test("a secret that ended while the body came in -> the 401 a new request would get, not the bytes", async () => {
		const ended = new AbortController();
		const ctx = routeCtx({ ended: ended.signal });
		const body = post(chunked("{}"));
		ended.abort();
		const got = await readRouteBody(body, ctx, 16, refuse);
		expect(got).toBeInstanceOf(Response);
		if (!(got instanceof Response)) return;
		expect(got.status).toBe(401);
		expect(got.headers.get("www-authenticate")).toContain('error="invalid_token"');
		expect(await got.json()).toEqual({ error: "unauthorized", code: "invalid_token" });
	});
});
