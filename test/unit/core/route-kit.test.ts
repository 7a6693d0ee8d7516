/**
 * The route kit (src/core/route-kit.ts): one envelope for every route refusal, a small body read within its
 * limit and the identity checked once it is in. Checked on the responses a route sends.
 */
import { describe, expect, test } from "bun:test";
import { readRouteBody, refusalsOf, serveRoute, watchIdentity } from "../../../src/core/route-kit.ts";
import type { ExtraRoute } from "../../../src/core/types.ts";
import { pushableBody } from "../../helpers/body.ts";
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

describe("serveRoute: the route duties the pipeline applies by default (issue 41 item 3)", () => {
	const handled: Array<string | undefined> = [];
	const small: ExtraRoute = {
		methods: ["GET", "POST"],
		body: { max: 16, refuse },
		handle: async (_req, ctx) => {
			handled.push(ctx.body && new TextDecoder().decode(ctx.body));
			return new Response("ok");
		},
	};
	const streaming: ExtraRoute = { ...small, body: "stream" };
	const send = (route: ExtraRoute, body: string | ReadableStream<Uint8Array>, ctx = routeCtx()) =>
		serveRoute(route, new Request("http://127.0.0.1/x", { method: "POST", body }), ctx);

	test("a body within the bound reaches the handler as ctx.body; a GET gets none", async () => {
		handled.length = 0;
		expect((await send(small, "{}")).status).toBe(200);
		expect((await serveRoute(small, new Request("http://127.0.0.1/x"), routeCtx())).status).toBe(200);
		expect(handled).toEqual(["{}", undefined]);
	});

	test("over the bound -> the route's 413; a secret ended while the body came in -> 401; the handler never runs", async () => {
		handled.length = 0;
		expect((await send(small, "x".repeat(17))).status).toBe(413);
		const ended = new AbortController();
		const { body, push, end } = pushableBody();
		const answer = send(small, body, routeCtx({ ended: ended.signal }));
		push("{");
		ended.abort();
		push("}");
		end();
		const res = await answer;
		expect(res.status).toBe(401);
		expect(await res.json()).toEqual({ error: "unauthorized", code: "invalid_token" });
		expect(handled).toEqual([]);
	});

	test("a route that opts out by name (body: stream) reads its own body: nothing is read for it", async () => {
		handled.length = 0;
		expect((await send(streaming, "x".repeat(17))).status).toBe(200);
		expect(handled).toEqual([undefined]);
	});
});

describe("watchIdentity: a streamed body watched for the caller's secret (issue 41 item 3)", () => {
	test("ended mid-body -> cut called and ended reported; ended after the body -> ended reported too", async () => {
		const mid = new AbortController();
		let cuts = 0;
		const during = await watchIdentity(
			mid.signal,
			() => cuts++,
			async () => {
				mid.abort();
				return 7;
			},
		);
		expect({ cuts, during }).toEqual({ cuts: 1, during: { piped: { ok: true, value: 7 }, ended: true } });
		const live = await watchIdentity(
			new AbortController().signal,
			() => cuts++,
			async () => 1,
		);
		expect(live).toEqual({ piped: { ok: true, value: 1 }, ended: false });
	});
});
