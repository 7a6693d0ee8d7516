/**
 * Property-based tests over the whole pipeline `handle(Request)`: random and mutated methods, paths,
 * headers and bodies. Claims: never an exception, never a 500, every answer a documented row, and
 * nothing changes (sessions, tool runs, extra routes) without the valid token.
 * FUZZ_RUNS raises the number of runs (default 2,000 per property).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ERRORS } from "../../src/errors.ts";
import { BridgeServer, type ExtraRoute, type ToolCallRequest } from "../../src/server.ts";

const TOKEN = "fuzz-token-0123456789abcdefghijklmnopqrstu";
const RUNS = Number(process.env.FUZZ_RUNS) || 2000;
const DOCUMENTED_STATUS = new Set([200, 202, 204, 400, 401, 403, 404, 405, 413]);
const DOCUMENTED_ERRORS = new Set(Object.values(ERRORS).map(r => `${r.status}|${r.code}|${r.message}`));

interface Harness {
	server: BridgeServer;
	calls: ToolCallRequest[];
	extra: string[];
	issued: string;
}

async function harness(): Promise<Harness> {
	const calls: ToolCallRequest[] = [];
	const extra: string[] = [];
	const route: ExtraRoute = {
		methods: ["GET", "POST"],
		handle: async req => {
			extra.push(req.method);
			return new Response("{}", { headers: { "content-type": "application/json" } });
		},
	};
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
			token: TOKEN,
			bindHost: "127.0.0.1",
			isLoopbackBind: true,
			allowedOrigins: [],
			routes: { "/blob": route, "/host-llm": route },
		},
	);
	const init = await server.handle(
		new Request("http://127.0.0.1:9/", {
			method: "POST",
			headers: { authorization: `Bearer ${TOKEN}`, host: "127.0.0.1:9" },
			body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} }),
		}),
	);
	return { server, calls, extra, issued: init.headers.get("mcp-session-id") ?? "" };
}

const methodArb = fc.oneof(
	fc.constantFrom("GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH"),
	fc.stringMatching(/^[A-Z]{1,8}$/),
);
const pathArb = fc.oneof(
	fc.constantFrom("/", "/mcp", "/blob", "/host-llm", "/.well-known/oauth-authorization-server", "/register", "/x"),
	fc.webPath(),
	fc.constantFrom("/mcp/", "//", "/%2e%2e/", "/blob?path=%00", "/?a=b"),
);
const authArb = fc.oneof(
	fc.constant(`Bearer ${TOKEN}`),
	fc.constant(`bearer ${TOKEN}`),
	fc.constant(`Bearer ${TOKEN} `),
	fc.constant(`Bearer ${TOKEN.slice(0, -1)}`),
	fc.constant(`Basic ${TOKEN}`),
	fc.constant("Bearer"),
	fc.constant(""),
	fc.string(),
	fc.constant(undefined),
);
const hostArb = fc.oneof(
	fc.constantFrom("127.0.0.1:9", "localhost:9", "[::1]:9", "evil.example", "127.0.0.1.evil.example", "", "[::1"),
	fc.domain(),
);
const originArb = fc.oneof(
	fc.constant(undefined),
	fc.constantFrom("http://127.0.0.1:9", "http://evil.example", "null", "not a url", "http://localhost:9"),
	fc.webUrl(),
);
const versionArb = fc.oneof(
	fc.constant(undefined),
	fc.constantFrom("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2024-11-05", ""),
	fc.string(),
);

const idArb = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.boolean(), fc.object());
const messageArb = fc.oneof(
	fc.record({
		jsonrpc: fc.constantFrom("2.0", "1.0", 2),
		id: idArb,
		method: fc.constantFrom("initialize", "ping", "tools/list", "tools/call", "resources/list", "", "x"),
		params: fc.oneof(
			fc.constant(undefined),
			fc.record({ name: fc.oneof(fc.constant("read"), fc.string(), fc.integer()), arguments: fc.anything() }),
			fc.anything(),
		),
	}),
	fc.record({ jsonrpc: fc.constant("2.0"), method: fc.constantFrom("notifications/cancelled", "notifications/x") }),
	fc.record({ jsonrpc: fc.constant("2.0"), id: idArb, result: fc.anything() }),
	fc.anything(),
);
const bodyArb: fc.Arbitrary<Uint8Array | string | undefined> = fc.oneof(
	messageArb.map(m => JSON.stringify(m) ?? "null"),
	messageArb.map(m => (JSON.stringify(m) ?? "").slice(0, -1)),
	fc.array(messageArb, { maxLength: 3 }).map(a => JSON.stringify(a)),
	fc.constantFrom("1e999999", "-0", "123456789012345678901234567890", '{"jsonrpc":"2.0","id":1e400,"method":"ping"}'),
	fc.integer({ min: 1, max: 2000 }).map(n => `${"[".repeat(n)}${"]".repeat(n)}`),
	fc.uint8Array({ maxLength: 64 }),
	fc.constant(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])),
	fc.string(),
	fc.constant(undefined),
);

const requestArb = fc.record({
	method: methodArb,
	path: pathArb,
	auth: authArb,
	host: hostArb,
	origin: originArb,
	version: versionArb,
	session: fc.oneof(fc.constant("issued"), fc.constant(undefined), fc.string()),
	accept: fc.constantFrom(undefined, "application/json, text/event-stream", "*/*", "text/html"),
	body: bodyArb,
});

type Sample = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

function build(s: Sample, issued: string): Request | null {
	const headers = new Headers();
	try {
		if (s.auth !== undefined) headers.set("authorization", s.auth);
		headers.set("host", s.host);
		if (s.origin !== undefined) headers.set("origin", s.origin);
		if (s.version !== undefined) headers.set("mcp-protocol-version", s.version);
		if (s.session !== undefined) headers.set("mcp-session-id", s.session === "issued" ? issued : s.session);
		if (s.accept !== undefined) headers.set("accept", s.accept);
		const hasBody = s.body !== undefined && s.method !== "GET" && s.method !== "HEAD";
		return new Request(`http://127.0.0.1:9${s.path}`, {
			method: s.method,
			headers,
			...(hasBody ? { body: s.body } : {}),
		});
	} catch {
		// The sample is not a representable HTTP request (e.g. a header with a newline): skip it.
		return null;
	}
}

async function checkAnswer(res: Response): Promise<void> {
	expect(DOCUMENTED_STATUS.has(res.status)).toBe(true);
	const type = res.headers.get("content-type") ?? "";
	if (type.startsWith("text/event-stream")) {
		await res.body?.cancel();
		return;
	}
	const text = await res.text();
	if (res.status === 202 || res.status === 204) {
		expect(text).toBe("");
		return;
	}
	if (res.status === 404 && type.startsWith("text/plain")) {
		expect(text).toBe("not found\n");
		return;
	}
	const body = JSON.parse(text) as { error?: { code: number; message: string }; result?: unknown };
	if (body.error) expect(DOCUMENTED_ERRORS.has(`${res.status}|${body.error.code}|${body.error.message}`)).toBe(true);
	else expect(res.status).toBe(200);
}

describe("handle(Request) under hostile input", () => {
	test("never throws, never 500, always a documented row", async () => {
		const h = await harness();
		await fc.assert(
			fc.asyncProperty(requestArb, async s => {
				const req = build(s, h.issued);
				if (req === null) return;
				await checkAnswer(await h.server.handle(req));
			}),
			{ numRuns: RUNS },
		);
	}, 120_000);

	test("without the valid token nothing changes: no session, no tool run, no extra route", async () => {
		const h = await harness();
		const sessionsBefore = h.server.sessions.size;
		await fc.assert(
			fc.asyncProperty(requestArb, async s => {
				const valid =
					s.auth !== undefined && /^bearer +/i.test(s.auth) && s.auth.replace(/^bearer +/i, "").trim() === TOKEN;
				if (valid) return;
				const req = build(s, h.issued);
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
	}, 120_000);
});
