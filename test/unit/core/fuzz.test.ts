/**
 * Property-based tests over the whole pipeline `handle(Request)` with the real `/blob` (on a temp dir)
 * and `/host-llm` (over a fake model registry) routes: random and mutated methods, paths, queries,
 * headers and bodies. Claims: never an exception, never a 500, every answer a documented row (the
 * pipeline's table or the route's own codes), and nothing changes (sessions, tool runs, route calls,
 * audit records, files, the takeover) without the valid token.
 * FUZZ_RUNS raises the number of runs (default 2,000 per property).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { BLOB_ERRORS } from "../../../src/blob/parse.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { ERRORS } from "../../../src/core/errors.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import type { ExtraRoute, ToolCallRequest } from "../../../src/core/types.ts";
import { createHostLlmRoute, HOST_LLM_ERRORS } from "../../../src/takeover/route.ts";
import { Takeover } from "../../../src/takeover/takeover.ts";
import { buildRequest, requestArb, routeArbs } from "../../helpers/arbitraries.ts";
import { FakeHost } from "../../helpers/fake-takeover-host.ts";

const TOKEN = "fuzz-token-0123456789abcdefghijklmnopqrstu";
const BASE = "http://127.0.0.1:9";
const RUNS = Number(process.env.FUZZ_RUNS) || 2000;
const DOCUMENTED_STATUS = new Set([200, 202, 204, 400, 401, 403, 404, 405, 413]);
const DOCUMENTED_ERRORS = new Set(Object.values(ERRORS).map(r => `${r.status}|${r.code}|${r.message}`));

interface Harness {
	server: BridgeServer;
	calls: ToolCallRequest[];
	/** Requests that reached a route handler (the real `/blob` and `/host-llm`). */
	extra: string[];
	audits: AuditRecord[];
	takeoverHost: FakeHost;
	/** The temp dir holding the blob route's home and cwd. */
	dir: string;
	issued: string;
}

const harnesses: Harness[] = [];
afterAll(() => {
	for (const h of harnesses) rmSync(h.dir, { recursive: true, force: true });
});

/** The route as built, with each request it handles noted first. */
function noted(route: ExtraRoute, extra: string[]): ExtraRoute {
	return {
		methods: route.methods,
		body: route.body,
		handle: (req, ctx) => {
			extra.push(req.method);
			return route.handle(req, ctx);
		},
	};
}

/** The real pipeline with the real `/blob` (on a temp dir) and `/host-llm` (over a fake host registry). */
async function harness(): Promise<Harness> {
	const calls: ToolCallRequest[] = [];
	const extra: string[] = [];
	const audits: AuditRecord[] = [];
	const dir = mkdtempSync(join(tmpdir(), "fuzz-routes-"));
	mkdirSync(join(dir, "home"));
	mkdirSync(join(dir, "cwd"));
	writeFileSync(join(dir, "cwd", "seed.txt"), "0123456789");
	const blob = createBlobRoute({
		home: () => join(dir, "home"),
		cwd: () => join(dir, "cwd"),
		audit: r => audits.push(r),
		log: () => {},
		config: () => ({ blob: "write" }),
	});
	const takeoverHost = new FakeHost();
	const hostLlm = createHostLlmRoute(new Takeover(takeoverHost, r => audits.push(r)));
	const server = new BridgeServer(
		{
			version: "0.0.0",
			instructions: "fuzz",
			listTools: () => [{ name: "read", description: "", inputSchema: { type: "object" } }],
			callTool: async req => {
				calls.push(req);
				return { content: [{ type: "text", text: "ok" }], isError: false };
			},
			log: () => {},
		},
		{
			ownerSecret: TOKEN,
			bindHost: "127.0.0.1",
			isLoopbackBind: true,
			allowedOrigins: [],
			routes: { "/blob": noted(blob, extra), "/host-llm": noted(hostLlm, extra) },
		},
	);
	const init = await server.handle(
		new Request("http://127.0.0.1:9/", {
			method: "POST",
			headers: { authorization: `Bearer ${TOKEN}`, host: "127.0.0.1:9" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} }),
		}),
	);
	const h = { server, calls, extra, audits, takeoverHost, dir, issued: init.headers.get("mcp-session-id") ?? "" };
	harnesses.push(h);
	return h;
}

/** Each route's own refusals: `{error, code}` with the code's documented status. */
const ROUTE_ERRORS: Record<string, Record<string, number>> = {
	"/blob": BLOB_ERRORS,
	"/host-llm": HOST_LLM_ERRORS,
};

/** Statuses only a route answers with: partial content and the conflicts of its own table. */
const ROUTE_STATUS: Record<string, number[]> = { "/blob": [206, 409, 416, 503], "/host-llm": [409] };

export async function checkAnswer(res: Response, path = "/"): Promise<void> {
	const route = ROUTE_ERRORS[path] ? path : null;
	expect(res.status).not.toBe(500);
	expect(DOCUMENTED_STATUS.has(res.status) || ROUTE_STATUS[route ?? ""]?.includes(res.status)).toBe(true);
	const type = res.headers.get("content-type") ?? "";
	if (type.startsWith("text/event-stream")) {
		await res.body?.cancel();
		return;
	}
	if (route === "/blob" && (res.status === 200 || res.status === 206) && !type.startsWith("application/json")) {
		// A download (GET) or a size (HEAD): bytes, not JSON.
		await res.arrayBuffer();
		return;
	}
	const text = await res.text();
	if (res.status === 202 || res.status === 204 || (route === "/blob" && text === "")) {
		expect(text).toBe("");
		return;
	}
	if (res.status === 404 && type.startsWith("text/plain")) {
		expect(text).toBe("not found\n");
		return;
	}
	const body = JSON.parse(text) as { error?: { code: number; message: string } | string; code?: string };
	if (typeof body.error === "string") {
		// Refused by the pipeline (a row of the one table) or by the route itself (its own codes).
		const row = (ERRORS as Record<string, { status: number; message: string }>)[body.code ?? ""];
		const own = route ? ROUTE_ERRORS[route]?.[body.code ?? ""] : undefined;
		if (own !== undefined) expect(own).toBe(res.status);
		else expect(row && `${row.status}|${row.message}`).toBe(`${res.status}|${body.error}`);
	} else if (body.error) {
		expect(DOCUMENTED_ERRORS.has(`${res.status}|${body.error.code}|${body.error.message}`)).toBe(true);
	} else expect(res.status).toBe(200);
}

describe("handle(Request) under hostile input", () => {
	test("never throws, never 500, always a documented row", async () => {
		const h = await harness();
		await fc.assert(
			fc.asyncProperty(requestArb(TOKEN), async s => {
				const req = buildRequest(s, BASE, h.issued);
				if (req === null) return;
				await checkAnswer(await h.server.handle(req), new URL(req.url).pathname);
			}),
			{ numRuns: RUNS },
		);
	}, 120_000);

	test("the real /blob and /host-llm: never throw, never 500, always a documented row; both do real work", async () => {
		const h = await harness();
		await fc.assert(
			fc.asyncProperty(requestArb(TOKEN, routeArbs), async s => {
				const req = buildRequest(s, BASE, h.issued);
				if (req === null) return;
				await checkAnswer(await h.server.handle(req), new URL(req.url).pathname);
			}),
			{ numRuns: RUNS },
		);
		// The runs reached past the routes' first checks: files written and read, the switch flipped both ways.
		const done = (tool: string, extra: (r: AuditRecord) => boolean = () => true) =>
			h.audits.filter(r => r.tool === tool && r.isError === false && extra(r)).length;
		expect(done("blob:write")).toBeGreaterThan(0);
		expect(done("blob:read")).toBeGreaterThan(0);
		expect(done("host_llm", r => (r.args as { enabled: boolean }).enabled === false)).toBeGreaterThan(0);
		expect(done("host_llm", r => (r.args as { enabled: boolean }).enabled === true)).toBeGreaterThan(0);
	}, 120_000);

	test("without the valid token nothing changes: no session, no tool run, no extra route", async () => {
		const h = await harness();
		const sessionsBefore = h.server.sessions.size;
		await fc.assert(
			fc.asyncProperty(fc.oneof(requestArb(TOKEN), requestArb(TOKEN, routeArbs)), async s => {
				const valid =
					s.auth !== undefined && /^bearer +/i.test(s.auth) && s.auth.replace(/^bearer +/i, "").trim() === TOKEN;
				if (valid) return;
				const req = buildRequest(s, BASE, h.issued);
				if (req === null) return;
				const res = await h.server.handle(req);
				expect([401, 403, 404, 405].includes(res.status)).toBe(true);
				await res.body?.cancel();
			}),
			{ numRuns: RUNS },
		);
		expect(h.server.sessions.size).toBe(sessionsBefore);
		expect(h.calls.length).toBe(0);
		expect(h.extra.length).toBe(0);
		expect(h.audits).toEqual([]);
		expect(readdirSync(join(h.dir, "cwd"))).toEqual(["seed.txt"]);
		expect(readdirSync(join(h.dir, "home"))).toEqual([]);
		expect(h.takeoverHost.denyApi).toBe(false);
	}, 120_000);
});
