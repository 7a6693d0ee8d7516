import { describe, expect, test } from "bun:test";
import { MAX_CALLS_IN_FLIGHT } from "../../../src/core/calls.ts";
import { SYSTEM_CLOCK } from "../../../src/core/clock.ts";
import { MAX_BODY_BYTES } from "../../../src/core/facts.ts";
import { NO_CONNECTION } from "../../../src/core/idle.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import type {
	BridgeDeps,
	CallAudit,
	Connection,
	ExtraRoute,
	McpTool,
	ServerOptions,
	ToolCallOutcome,
	ToolCallRequest,
} from "../../../src/core/types.ts";
import { pushableBody } from "../../helpers/body.ts";
import { waitFor } from "../../helpers/wait.ts";

const TOKEN = "test-token-0123456789abcdefghijklmnopqrstuv"; // 43 chars
const OTHER_TOKEN = "other-token-0123456789abcdefghijklmnopqrstu";
const HOST = "127.0.0.1:9";
const URL_BASE = "http://127.0.0.1:9";
const HOUR = 60 * 60 * 1000;
const MIB = 1024 * 1024;

const TOOLS: McpTool[] = [
	{ name: "read", description: "Read a file", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
];
const OK_OUTCOME: ToolCallOutcome = { content: [{ type: "text", text: "done" }], isError: false };

interface Deferred<T> {
	promise: Promise<T>;
	resolve(v: T): void;
}
function deferred<T = void>(): Deferred<T> {
	let resolve!: (v: T) => void;
	const promise = new Promise<T>(r => {
		resolve = r;
	});
	return { promise, resolve };
}

interface Harness {
	server: BridgeServer;
	logs: string[];
	calls: ToolCallRequest[];
	/** start:<id>, tool:<id>, done:<id> in the order they happened. */
	events: string[];
	starts: Array<Parameters<CallAudit["start"]>[0]>;
	dones: Array<Parameters<CallAudit["done"]>[0]>;
	clock: { t: number };
}

interface HarnessOptions {
	callTool?: (req: ToolCallRequest) => Promise<ToolCallOutcome>;
	auditStart?: () => Promise<void>;
	auditDone?: () => Promise<void>;
	/** The audit budget's admission (contract §19): 0 admits, else ms until it would. */
	auditAdmit?: CallAudit["admit"];
	opts?: Partial<ServerOptions>;
	listTools?: () => McpTool[];
}

/** A BridgeServer over a fake Deps: manual clock, recorded logs, calls and audit events. */
function makeServer(o: HarnessOptions = {}): Harness {
	const h: Omit<Harness, "server"> = {
		logs: [],
		calls: [],
		events: [],
		starts: [],
		dones: [],
		clock: { t: 1_000_000 },
	};
	const deps: BridgeDeps = {
		version: "9.9.9",
		instructions: "Tools of the omp host on this machine.",
		listTools: o.listTools ?? (() => TOOLS),
		callTool: async req => {
			// Like the host adapter: the start record is written just before the tool runs.
			await req.begin?.();
			h.calls.push(req);
			h.events.push(`tool:${req.callId}`);
			return o.callTool ? o.callTool(req) : OK_OUTCOME;
		},
		audit: {
			start: async c => {
				h.events.push(`start:${c.id}`);
				h.starts.push(c);
				await o.auditStart?.();
			},
			done: async c => {
				h.events.push(`done:${c.id}`);
				h.dones.push(c);
				await o.auditDone?.();
			},
			...(o.auditAdmit ? { admit: o.auditAdmit } : {}),
		},
		log: line => h.logs.push(line),
		clock: { now: () => h.clock.t, after: SYSTEM_CLOCK.after },
	};
	const server = new BridgeServer(deps, {
		ownerSecret: TOKEN,
		bindHost: "127.0.0.1",
		isLoopbackBind: true,
		allowedOrigins: [],
		...o.opts,
	});
	return { ...h, server };
}

type Hdrs = Record<string, string | null>;

/** A request with a loopback Host, the right token and JSON content type unless overridden (null removes). */
/** One turn of the event loop: every queued microtask has run, so anything not held back has happened. */
const settle = (): Promise<void> => new Promise(r => setImmediate(r));

type BodyReader = ReadableStreamDefaultReader<Uint8Array>;
type BodyRead = Awaited<ReturnType<BodyReader["read"]>>;

/** Reads a response body in steps: what has arrived so far, then the rest (one read in flight at a time). */
class StreamReader {
	readonly #reader: BodyReader;
	readonly #decoder = new TextDecoder();
	#next: Promise<BodyRead> | null = null;

	constructor(res: Response) {
		if (!res.body) throw new Error("response has no body");
		this.#reader = (res.body as ReadableStream<Uint8Array>).getReader() as BodyReader;
	}

	/** The text that arrived without waiting past one event-loop turn; `ended` when the stream closed. */
	async available(): Promise<{ text: string; ended: boolean }> {
		let text = "";
		for (;;) {
			this.#next ??= this.#reader.read();
			const r = await Promise.race([this.#next, settle().then(() => null)]);
			if (r === null) return { text, ended: false };
			this.#next = null;
			if (r.done) return { text, ended: true };
			text += this.#decoder.decode(r.value, { stream: true });
		}
	}

	async all(): Promise<string> {
		let text = "";
		for (;;) {
			const r = await (this.#next ?? this.#reader.read());
			this.#next = null;
			if (r.done) return text;
			text += this.#decoder.decode(r.value, { stream: true });
		}
	}
}

/** A server whose tool calls never finish: `entered` resolves with the request once the tool is called. */
function hangingServer(): { h: Harness; entered: Deferred<ToolCallRequest> } {
	const entered = deferred<ToolCallRequest>();
	const h = makeServer({
		callTool: req => {
			entered.resolve(req);
			return new Promise<ToolCallOutcome>(() => {});
		},
	});
	return { h, entered };
}

function request(method: string, path = "/", headers: Hdrs = {}, body?: RequestInit["body"]): Request {
	const merged: Hdrs = {
		host: HOST,
		authorization: `Bearer ${TOKEN}`,
		"content-type": "application/json",
		accept: "application/json, text/event-stream",
		...headers,
	};
	const h = new Headers();
	for (const [k, v] of Object.entries(merged)) if (v !== null) h.set(k, v);
	return new Request(`${URL_BASE}${path}`, { method, headers: h, ...(body === undefined ? {} : { body }) });
}

const post = (body: unknown, headers: Hdrs = {}, path = "/"): Request =>
	request("POST", path, headers, typeof body === "string" ? body : JSON.stringify(body));

const rpc = (method: string, params?: Record<string, unknown>, id: string | number = 1) => ({
	jsonrpc: "2.0",
	id,
	method,
	...(params === undefined ? {} : { params }),
});

const notification = (method: string, params?: Record<string, unknown>) => ({
	jsonrpc: "2.0",
	method,
	...(params === undefined ? {} : { params }),
});

const toolCall = (name: string, args: unknown, id: string | number = 1) =>
	rpc("tools/call", { name, arguments: args }, id);

async function initialize(h: Harness, protocolVersion = "2025-11-25"): Promise<string> {
	const res = await h.server.handle(post(rpc("initialize", { protocolVersion, capabilities: {}, clientInfo: {} })));
	expect(res.status).toBe(200);
	const sid = res.headers.get("mcp-session-id");
	if (sid === null) throw new Error("no Mcp-Session-Id");
	return sid;
}

interface RpcBody {
	jsonrpc: string;
	id: string | number | null;
	result?: Record<string, unknown>;
	error?: { code: number; message: string };
}

/** Asserts a JSON-RPC error response: HTTP status, JSON content type, code, message and id. */
async function expectRpcError(
	res: Response,
	status: number,
	code: number,
	message: string,
	id: string | number | null = null,
): Promise<RpcBody> {
	expect(res.status).toBe(status);
	expect(res.headers.get("content-type")).toStartWith("application/json");
	const body = (await res.json()) as RpcBody;
	expect(body).toEqual({ jsonrpc: "2.0", id, error: { code, message } });
	return body;
}

async function expectResult(res: Response, id: string | number = 1): Promise<Record<string, unknown>> {
	expect(res.status).toBe(200);
	const body = (await res.json()) as RpcBody;
	expect(body.jsonrpc).toBe("2.0");
	expect(body.id).toBe(id);
	expect(body.error).toBeUndefined();
	return body.result as Record<string, unknown>;
}

/** Body stream of `total` bytes in `chunk`-byte pieces, counting what was pulled and noting cancel. */
function countedStream(total: number, chunk = 64 * 1024) {
	const state = { pulled: 0, cancelled: false };
	const stream = new ReadableStream<Uint8Array>({
		pull(c) {
			if (state.pulled >= total) {
				c.close();
				return;
			}
			const n = Math.min(chunk, total - state.pulled);
			state.pulled += n;
			c.enqueue(new Uint8Array(n).fill(0x20));
		},
		cancel() {
			state.cancelled = true;
		},
	});
	return { stream, state };
}

/** A JSON-RPC ping padded with spaces to exactly `size` bytes. */
function pingOfSize(size: number): Uint8Array {
	const text = JSON.stringify(rpc("ping"));
	const out = new Uint8Array(size).fill(0x20);
	out.set(new TextEncoder().encode(text), 0);
	return out;
}

describe("BridgeServer error table", () => {
	test("unknown path -> 404 plain text", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), {}, "/nope"));
		expect(res.status).toBe(404);
		expect(res.headers.get("content-type")).toStartWith("text/plain");
	});

	test("forbidden_host: Host evil.com on a loopback bind -> 403 -32000", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { host: "evil.com" }));
		await expectRpcError(res, 403, -32000, "forbidden: Host header not allowed");
	});

	test("the reused Host/Origin verdict follows the headers: good, bad host, good, bad origin, good", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const status = async (headers: Hdrs) =>
			(await h.server.handle(post(rpc("ping"), { "mcp-session-id": sid, ...headers }))).status;
		expect(await status({})).toBe(200);
		expect(await status({ host: "evil.com" })).toBe(403);
		expect(await status({})).toBe(200);
		expect(await status({ origin: "http://evil.com" })).toBe(403);
		expect(await status({ host: null })).toBe(403);
		expect(await status({})).toBe(200);
	});

	test("forbidden_origin: Origin on another port -> 403 -32000", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { origin: "http://127.0.0.1:10" }));
		await expectRpcError(res, 403, -32000, "forbidden: Origin not allowed");
	});

	for (const method of ["GET", "PUT", "PATCH"]) {
		test(`method_not_allowed: ${method} / -> 405 with Allow: POST, DELETE`, async () => {
			const h = makeServer();
			const res = await h.server.handle(request(method, "/", {}, method === "GET" ? undefined : "{}"));
			expect(res.headers.get("allow")).toBe("POST, DELETE");
			await expectRpcError(res, 405, -32000, "method not allowed");
		});
	}

	test("unauthorized: no Authorization -> 401, WWW-Authenticate without error, id null", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { authorization: null }));
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge"');
		await expectRpcError(res, 401, -32000, "unauthorized");
	});

	test("unauthorized: Basic scheme -> 401 without error=invalid_token", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { authorization: "Basic dXNlcjpwdw==" }));
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge"');
		await expectRpcError(res, 401, -32000, "unauthorized");
	});

	test('invalid_token: wrong Bearer token -> 401 with error="invalid_token"', async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { authorization: `Bearer ${OTHER_TOKEN}` }));
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="omp-a2a-bridge", error="invalid_token"');
		await expectRpcError(res, 401, -32000, "unauthorized");
	});

	test("unsupported_protocol_version: a body that is no readable request -> -32022 with id null", async () => {
		const h = makeServer();
		for (const body of ["{not json", JSON.stringify({ jsonrpc: "2.0", method: "ping" }), "[]"]) {
			const res = await h.server.handle(post(body, { "mcp-protocol-version": "2024-11-05" }));
			expect(res.status).toBe(400);
			expect(((await res.json()) as { id: unknown }).id).toBeNull();
		}
	});

	test("unsupported_protocol_version: MCP-Protocol-Version 2024-11-05 -> 400 -32022 with data and the request's id", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { "mcp-protocol-version": "2024-11-05" }));
		expect(res.status).toBe(400);
		expect(await res.json()).toEqual({
			jsonrpc: "2.0",
			id: 1,
			error: {
				code: -32022,
				message: "unsupported MCP-Protocol-Version",
				data: { supported: ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"], requested: "2024-11-05" },
			},
		});
	});

	test("body_too_large: Content-Length 4 MiB + 1 -> 413 -32000", async () => {
		const h = makeServer();
		const res = await h.server.handle(request("POST", "/", {}, pingOfSize(MAX_BODY_BYTES + 1)));
		await expectRpcError(res, 413, -32000, "request body larger than 4 MiB");
	});

	test("parse_error: body not JSON -> 400 -32700", async () => {
		const h = makeServer();
		const res = await h.server.handle(post("{not json"));
		await expectRpcError(res, 400, -32700, "parse error");
	});

	test("invalid_request: batch array -> 400 -32600", async () => {
		const h = makeServer();
		const res = await h.server.handle(post([rpc("ping")]));
		await expectRpcError(res, 400, -32600, "invalid request");
	});

	test("invalid_request: jsonrpc 1.0 with readable id -> 400 -32600 echoing the id", async () => {
		const h = makeServer();
		const res = await h.server.handle(post({ jsonrpc: "1.0", id: 5, method: "ping" }));
		await expectRpcError(res, 400, -32600, "invalid request", 5);
	});

	test("session_required: missing Mcp-Session-Id -> 400 -32000", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping")));
		await expectRpcError(res, 400, -32000, "missing Mcp-Session-Id header", 1);
	});

	test("session_not_found: unknown Mcp-Session-Id -> 404 -32001", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { "mcp-session-id": "not-a-session" }));
		await expectRpcError(res, 404, -32001, "session not found", 1);
	});

	test("method_not_found: unknown method -> 200 -32601 with the request id", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(rpc("resources/list", {}, 42), { "mcp-session-id": sid }));
		await expectRpcError(res, 200, -32601, "method not found", 42);
	});

	const badParams: Array<[string, Record<string, unknown>]> = [
		["name missing", { arguments: {} }],
		["name a number", { name: 5, arguments: {} }],
		["arguments an array", { name: "read", arguments: [] }],
		["arguments a string", { name: "read", arguments: "x" }],
		["arguments null", { name: "read", arguments: null }],
	];
	for (const [name, params] of badParams) {
		test(`invalid_params: tools/call with ${name} -> 200 -32602, tool not called`, async () => {
			const h = makeServer();
			const sid = await initialize(h);
			const res = await h.server.handle(post(rpc("tools/call", params, 3), { "mcp-session-id": sid }));
			await expectRpcError(res, 200, -32602, "invalid params", 3);
			expect(h.calls).toEqual([]);
			expect(h.starts).toEqual([]);
		});
	}

	test("tools/call without params -> 200 -32602", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(rpc("tools/call", undefined, 3), { "mcp-session-id": sid }));
		await expectRpcError(res, 200, -32602, "invalid params", 3);
	});

	test("server_busy: 257th call while 256 are in flight -> 200 -32000 server busy", async () => {
		expect(MAX_CALLS_IN_FLIGHT).toBe(256);
		const release = deferred();
		const allIn = deferred();
		let entered = 0;
		const h = makeServer({
			callTool: async () => {
				if (++entered === MAX_CALLS_IN_FLIGHT) allIn.resolve();
				await release.promise;
				return OK_OUTCOME;
			},
		});
		const sid = await initialize(h);
		const pending: Promise<Response>[] = [];
		for (let i = 0; i < MAX_CALLS_IN_FLIGHT; i++) {
			pending.push(h.server.handle(post(toolCall("read", {}, i), { "mcp-session-id": sid })));
		}
		await allIn.promise;
		expect(h.server.inFlight.size).toBe(256);
		const busy = await h.server.handle(post(toolCall("read", {}, "one-too-many"), { "mcp-session-id": sid }));
		await expectRpcError(busy, 200, -32000, "server busy", "one-too-many");
		expect(h.calls.length).toBe(256);
		release.resolve();
		const answers = await Promise.all(pending);
		expect(answers.every(r => r.status === 200)).toBe(true);
		expect(h.server.inFlight.size).toBe(0);
	});

	test("audit_budget: a call its token's audit budget cannot pay for -> 200 -32000 with retryAfterS; the tool never runs, nothing is started", async () => {
		const asked: Array<Parameters<NonNullable<CallAudit["admit"]>>[0]> = [];
		const h = makeServer({
			auditAdmit: c => {
				asked.push(c);
				return asked.length === 1 ? 0 : 2500;
			},
		});
		const sid = await initialize(h);
		const ok = await h.server.handle(post(toolCall("read", { path: "/a" }, 1), { "mcp-session-id": sid }));
		expect(ok.status).toBe(200);
		await ok.text();
		const res = await h.server.handle(post(toolCall("read", { path: "/b" }, 2), { "mcp-session-id": sid }));
		const body = (await res.json()) as { id: number; error: { code: number; message: string; data: unknown } };
		expect(res.status).toBe(200);
		expect(body.id).toBe(2);
		expect(body.error).toEqual({
			code: -32000,
			message: "this token's audit budget is spent: calls are refused until it refills (data.retryAfterS)",
			data: { retryAfterS: 3 },
		});
		expect(h.calls.length).toBe(1);
		expect(h.starts.map(c => c.args)).toEqual([{ path: "/a" }]);
		// The admitted call's records carry the id it was admitted under.
		expect(asked.map(c => [c.tool, c.tokenName, c.args])).toEqual([
			["read", "owner", { path: "/a" }],
			["read", "owner", { path: "/b" }],
		]);
		expect(h.starts[0]?.id).toBe(asked[0]?.id);
		expect(h.server.inFlight.size).toBe(0);
	});

	test("request_cancelled: notifications/cancelled for an in-flight call -> 200 -32800", async () => {
		const { h, entered } = hangingServer();
		const sid = await initialize(h);
		const pending = h.server.handle(post(toolCall("bash", { command: "sleep 100" }, 7), { "mcp-session-id": sid }));
		const req = await entered.promise;
		expect(req.signal.aborted).toBe(false);
		const note = await h.server.handle(
			post(notification("notifications/cancelled", { requestId: 7 }), { "mcp-session-id": sid }),
		);
		expect(note.status).toBe(202);
		await expectRpcError(await pending, 200, -32800, "request cancelled", 7);
		expect(req.signal.aborted).toBe(true);
		// This tool ignores its signal: it is still running, so it still takes a slot (contract §15).
		expect(h.server.inFlight.size).toBe(1);
		expect([...h.server.inFlight.values()][0]).toMatchObject({ tool: "bash", cancelled: true });
	});

	test("call-and-cancel 256 times with tools that ignore the signal -> the 257th call is server busy; slots free as tools stop", async () => {
		const stops: Array<() => void> = [];
		const h = makeServer({
			callTool: () =>
				new Promise<ToolCallOutcome>(resolve => {
					stops.push(() => resolve(OK_OUTCOME));
				}),
		});
		const sid = await initialize(h);
		for (let i = 0; i < MAX_CALLS_IN_FLIGHT; i++) {
			const pending = h.server.handle(post(toolCall("bash", { command: "sleep 100" }, i), { "mcp-session-id": sid }));
			await h.server.handle(post(notification("notifications/cancelled", { requestId: i }), { "mcp-session-id": sid }));
			await expectRpcError(await pending, 200, -32800, "request cancelled", i);
		}
		expect(h.server.inFlight.size).toBe(MAX_CALLS_IN_FLIGHT);
		const busy = await h.server.handle(post(toolCall("read", {}, "more"), { "mcp-session-id": sid }));
		await expectRpcError(busy, 200, -32000, "server busy", "more");
		for (const stop of stops) stop();
		for (let i = 0; i < 100 && h.server.inFlight.size > 0; i++) await Bun.sleep(1);
		expect(h.server.inFlight.size).toBe(0);
	});

	test("a caller that goes away without cancelling -> the call runs on, marked abandoned (legacy era)", async () => {
		const { h, entered } = hangingServer();
		const sid = await initialize(h);
		const gone = new AbortController();
		const req = new Request(post(toolCall("bash", { command: "sleep 100" }, 3), { "mcp-session-id": sid }), {
			signal: gone.signal,
		});
		void h.server.handle(req);
		const call = await entered.promise;
		gone.abort();
		expect(call.signal.aborted).toBe(false);
		expect([...h.server.inFlight.values()]).toMatchObject([{ tool: "bash", cancelled: false, abandoned: true }]);
	});

	test("invalid_params from the tool's schema -> 200 -32602 with the message naming the argument; audited as an error", async () => {
		const message = "invalid arguments for tool 'read': path: path must be a string (was missing)";
		const h = makeServer({
			callTool: async () => ({ content: [{ type: "text", text: message }], isError: true, invalidArgs: message }),
		});
		const sid = await initialize(h);
		const res = await h.server.handle(post(toolCall("read", { pth: 1 }, 4), { "mcp-session-id": sid }));
		await expectRpcError(res, 200, -32602, message, 4);
	});

	test("a client that hangs up mid-body -> logged as a client abort, not as an internal error", async () => {
		const h = makeServer();
		const gone = new AbortController();
		const body = new ReadableStream<Uint8Array>({
			start: c => {
				c.enqueue(new TextEncoder().encode('{"jsonrpc":'));
				gone.signal.addEventListener("abort", () =>
					c.error(new DOMException("The connection was closed.", "AbortError")),
				);
			},
		});
		const req = new Request(request("POST", "/", {}, body), { signal: gone.signal });
		const pending = h.server.handle(req);
		gone.abort();
		await pending;
		expect(h.logs).toEqual(["a2a-bridge: client aborted POST / before its request was complete"]);
	});

	test("internal_error: throwing callTool -> 500 fixed body, detail only in the log", async () => {
		const secret = "EACCES: permission denied, open '/root/secret-path'";
		const h = makeServer({
			callTool: async () => {
				throw new Error(secret);
			},
		});
		const sid = await initialize(h);
		const res = await h.server.handle(post(toolCall("read", {}, 9), { "mcp-session-id": sid }));
		expect(res.status).toBe(500);
		const text = await res.text();
		expect(text).not.toContain(secret);
		expect(text).not.toContain("/root");
		expect(JSON.parse(text)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "internal error" } });
		expect(h.logs.some(l => l.includes(secret))).toBe(true);
		expect(h.server.inFlight.size).toBe(0);
	});
});

describe("BridgeServer pipeline order", () => {
	const discovery = [
		"/.well-known/oauth-authorization-server",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/mcp",
		"/.well-known/openid-configuration",
		"/authorize",
		"/token",
		"/register",
	];
	for (const path of discovery) {
		test(`${path} without token and with a bad Host -> 404 before Host check and auth`, async () => {
			const h = makeServer();
			for (const method of ["GET", "POST"]) {
				const res = await h.server.handle(
					request(method, path, { authorization: null, host: "evil.com" }, method === "POST" ? "{}" : undefined),
				);
				expect(res.status).toBe(404);
				expect(res.headers.get("www-authenticate")).toBeNull();
			}
			expect(h.logs).toEqual([]);
		});
	}

	test("bad Host and no token -> 403, not 401", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { host: "evil.com", authorization: null }));
		expect(res.status).toBe(403);
		expect(res.headers.get("www-authenticate")).toBeNull();
	});

	test("bad Origin and no token -> 403, not 401", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { origin: "http://evil.com", authorization: null }));
		expect(res.status).toBe(403);
	});

	test("bad Host on GET -> 403, not 405", async () => {
		const h = makeServer();
		const res = await h.server.handle(request("GET", "/", { host: "evil.com" }));
		expect(res.status).toBe(403);
	});

	test("GET without token -> 405, not 401", async () => {
		const h = makeServer();
		const res = await h.server.handle(request("GET", "/", { authorization: null }));
		expect(res.status).toBe(405);
		expect(res.headers.get("allow")).toBe("POST, DELETE");
	});

	test("unsupported MCP-Protocol-Version without token -> 401 (auth first)", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { authorization: null, "mcp-protocol-version": "1999-01-01" }));
		expect(res.status).toBe(401);
	});

	test("unsupported MCP-Protocol-Version with a valid token -> 400", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(
			post(rpc("ping"), { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" }),
		);
		expect(res.status).toBe(400);
		expect(((await res.json()) as RpcBody).error).toMatchObject({ code: -32022, data: { requested: "1999-01-01" } });
	});

	for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
		test(`MCP-Protocol-Version ${version} -> accepted`, async () => {
			const h = makeServer();
			const sid = await initialize(h);
			const res = await h.server.handle(post(rpc("ping"), { "mcp-session-id": sid, "mcp-protocol-version": version }));
			expect(await expectResult(res)).toEqual({});
		});
	}

	test("MCP-Protocol-Version absent -> accepted", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(rpc("ping"), { "mcp-session-id": sid, "mcp-protocol-version": null }));
		expect(await expectResult(res)).toEqual({});
	});

	test("oversized body without token -> 401, body never read", async () => {
		const h = makeServer();
		const { stream, state } = countedStream(8 * MIB);
		const res = await h.server.handle(request("POST", "/", { authorization: null }, stream));
		expect(res.status).toBe(401);
		expect(state.pulled).toBeLessThan(MIB);
	});

	test("unparsable body without session -> 400 -32700 (parse before session)", async () => {
		const h = makeServer();
		await expectRpcError(await h.server.handle(post("nope")), 400, -32700, "parse error");
	});

	test("unknown method without session -> 400 session required (session before dispatch)", async () => {
		const h = makeServer();
		await expectRpcError(
			await h.server.handle(post(rpc("nope/nope"))),
			400,
			-32000,
			"missing Mcp-Session-Id header",
			1,
		);
	});

	test("unauthorized tools/call -> not audited, tool not called", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(toolCall("read", {}), { authorization: `Bearer ${OTHER_TOKEN}` }));
		expect(res.status).toBe(401);
		expect(h.starts).toEqual([]);
		expect(h.calls).toEqual([]);
	});

	test("same-origin Origin -> accepted", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("initialize", {}), { origin: URL_BASE }));
		expect(res.status).toBe(200);
	});

	test("Origin listed in allowedOrigins -> accepted", async () => {
		const h = makeServer({ opts: { allowedOrigins: ["http://localhost:3000"] } });
		const res = await h.server.handle(post(rpc("initialize", {}), { origin: "http://localhost:3000" }));
		expect(res.status).toBe(200);
	});

	test("non-loopback bind -> any Host accepted", async () => {
		const h = makeServer({ opts: { isLoopbackBind: false, bindHost: "0.0.0.0" } });
		const res = await h.server.handle(post(rpc("initialize", {}), { host: "my-machine.lan:9" }));
		expect(res.status).toBe(200);
	});

	test("/mcp -> same endpoint as /", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("initialize", {}), {}, "/mcp"));
		expect(res.status).toBe(200);
		expect(res.headers.get("mcp-session-id")).not.toBeNull();
	});
});

describe("BridgeServer body limit", () => {
	test("declared Content-Length over 4 MiB -> 413 before reading a stalled body", async () => {
		const h = makeServer();
		// A body that never ends: the 413 can only come from the declared length.
		const stalled = new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) });
		const res = await h.server.handle(request("POST", "/", { "content-length": String(MAX_BODY_BYTES + 1) }, stalled));
		expect(res.status).toBe(413);
	});

	test("streamed body without Content-Length over 4 MiB -> 413, stream cancelled near the limit", async () => {
		const h = makeServer();
		const { stream, state } = countedStream(64 * MIB);
		const req = request("POST", "/", {}, stream);
		expect(req.headers.get("content-length")).toBeNull();
		const res = await h.server.handle(req);
		await expectRpcError(res, 413, -32000, "request body larger than 4 MiB");
		expect(state.cancelled).toBe(true);
		expect(state.pulled).toBeLessThan(MAX_BODY_BYTES + MIB);
	});

	test("body of exactly 4 MiB (4194304 bytes) -> accepted", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(request("POST", "/", { "mcp-session-id": sid }, pingOfSize(MAX_BODY_BYTES)));
		expect(await expectResult(res)).toEqual({});
	});

	test("streamed body of exactly 4 MiB without Content-Length -> accepted", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const bytes = pingOfSize(MAX_BODY_BYTES);
		let sent = false;
		const stream = new ReadableStream<Uint8Array>({
			pull(c) {
				if (sent) c.close();
				else c.enqueue(bytes);
				sent = true;
			},
		});
		const res = await h.server.handle(request("POST", "/", { "mcp-session-id": sid }, stream));
		expect(await expectResult(res)).toEqual({});
	});

	test("streamed body of 4 MiB + 1 without Content-Length -> 413", async () => {
		const h = makeServer();
		const { stream } = countedStream(MAX_BODY_BYTES + 1);
		const res = await h.server.handle(request("POST", "/", {}, stream));
		expect(res.status).toBe(413);
	});
});

describe("BridgeServer initialize", () => {
	for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
		test(`protocolVersion ${version} -> echoed`, async () => {
			const h = makeServer();
			const res = await h.server.handle(post(rpc("initialize", { protocolVersion: version })));
			const result = await expectResult(res);
			expect(result.protocolVersion).toBe(version);
		});
	}

	for (const asked of ["2024-11-05", "2099-01-01", 42, undefined]) {
		test(`protocolVersion ${JSON.stringify(asked)} -> answered 2025-11-25`, async () => {
			const h = makeServer();
			const res = await h.server.handle(post(rpc("initialize", asked === undefined ? {} : { protocolVersion: asked })));
			expect((await expectResult(res)).protocolVersion).toBe("2025-11-25");
		});
	}

	test("result -> tools capability without listChanged, serverInfo and instructions", async () => {
		const h = makeServer();
		const result = await expectResult(
			await h.server.handle(post(rpc("initialize", { protocolVersion: "2025-06-18" }))),
		);
		expect(result).toEqual({
			protocolVersion: "2025-06-18",
			capabilities: { tools: { listChanged: false } },
			serverInfo: { name: "omp-a2a-bridge", version: "9.9.9" },
			instructions: "Tools of the omp host on this machine.",
		});
	});

	test("-> Mcp-Session-Id issued: visible ASCII, UUID-sized, unique per initialize", async () => {
		const h = makeServer();
		const a = await initialize(h);
		const b = await initialize(h);
		expect(a).toMatch(/^[\x21-\x7e]+$/);
		expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(a).not.toBe(b);
		expect(h.server.sessions.size).toBe(2);
	});

	test("initialize needs no Mcp-Session-Id, and an unknown one is ignored", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("initialize", {}), { "mcp-session-id": "stale" }));
		expect(res.status).toBe(200);
		expect(res.headers.get("mcp-session-id")).not.toBe("stale");
	});
});

describe("BridgeServer sessions", () => {
	test("notification with a session -> 202, empty body", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(notification("notifications/initialized"), { "mcp-session-id": sid }));
		expect(res.status).toBe(202);
		expect(await res.text()).toBe("");
	});

	test("client response message -> 202, empty body", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post({ jsonrpc: "2.0", id: 3, result: {} }, { "mcp-session-id": sid }));
		expect(res.status).toBe(202);
		expect(await res.text()).toBe("");
	});

	test("notification without Mcp-Session-Id -> 400", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(notification("notifications/initialized")));
		await expectRpcError(res, 400, -32000, "missing Mcp-Session-Id header");
	});

	test("empty Mcp-Session-Id -> 400", async () => {
		const h = makeServer();
		const res = await h.server.handle(post(rpc("ping"), { "mcp-session-id": "" }));
		expect(res.status).toBe(400);
	});

	test("ping with a session -> {}", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(rpc("ping", undefined, "p"), { "mcp-session-id": sid }));
		expect(await expectResult(res, "p")).toEqual({});
	});

	test("tools/list -> the deps' tools, no nextCursor", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const result = await expectResult(await h.server.handle(post(rpc("tools/list"), { "mcp-session-id": sid })));
		expect(result).toEqual({ tools: TOOLS });
	});

	test("tools/list follows the deps' list: a new list is serialized again, the same one is reused", async () => {
		let current: McpTool[] = TOOLS;
		const h = makeServer({ listTools: () => current });
		const sid = await initialize(h);
		const list = async () =>
			(await expectResult(await h.server.handle(post(rpc("tools/list"), { "mcp-session-id": sid })))) as {
				tools: McpTool[];
			};
		expect((await list()).tools.map(t => t.name)).toEqual(TOOLS.map(t => t.name));
		current = [...TOOLS, { name: "added", description: "", inputSchema: { type: "object" } }];
		expect((await list()).tools.map(t => t.name)).toEqual([...TOOLS.map(t => t.name), "added"]);
		current = [];
		expect(await list()).toEqual({ tools: [] });
	});

	test("DELETE -> 204, then the session answers 404 to POST and DELETE", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const del = await h.server.handle(request("DELETE", "/", { "mcp-session-id": sid }));
		expect(del.status).toBe(204);
		expect(await del.text()).toBe("");
		await expectRpcError(
			await h.server.handle(post(rpc("ping"), { "mcp-session-id": sid })),
			404,
			-32001,
			"session not found",
			1,
		);
		expect((await h.server.handle(request("DELETE", "/", { "mcp-session-id": sid }))).status).toBe(404);
	});

	test("DELETE without Mcp-Session-Id -> 400", async () => {
		const h = makeServer();
		const res = await h.server.handle(request("DELETE", "/"));
		await expectRpcError(res, 400, -32000, "missing Mcp-Session-Id header");
	});

	test("DELETE without token -> 401, session kept", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(request("DELETE", "/", { "mcp-session-id": sid, authorization: null }));
		expect(res.status).toBe(401);
		expect(h.server.sessions.peek(sid)).toBeDefined();
	});

	test("session idle 24 h + 1 ms -> 404; touched within 24 h -> still live", async () => {
		const h = makeServer();
		const a = await initialize(h);
		const b = await initialize(h);
		h.clock.t += 23 * HOUR;
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": b }))).status).toBe(200);
		h.clock.t += HOUR + 1;
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": a }))).status).toBe(404);
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": b }))).status).toBe(200);
	});

	test("a session with a call in flight outlives 24 h idle (the call table tells the sessions it is busy)", async () => {
		const { h, entered } = hangingServer();
		const [busy, idle] = [await initialize(h), await initialize(h)];
		void h.server.handle(post(toolCall("bash", {}), { "mcp-session-id": busy }));
		await entered.promise;
		h.clock.t += 25 * HOUR;
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": busy }))).status).toBe(200);
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": idle }))).status).toBe(404);
	});

	test("65th initialize -> the least recently seen session gets 404", async () => {
		const h = makeServer();
		const sids: string[] = [];
		for (let i = 0; i < 64; i++) {
			sids.push(await initialize(h));
			h.clock.t += 1;
		}
		const [first, second] = sids as [string, string];
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": first }))).status).toBe(200);
		await initialize(h);
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": second }))).status).toBe(404);
		expect((await h.server.handle(post(rpc("ping"), { "mcp-session-id": first }))).status).toBe(200);
		expect(h.server.sessions.size).toBe(64);
	});
});

describe("BridgeServer tools/call", () => {
	test("valid call -> 200 with the tool's content and isError, callsServed counted", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const res = await h.server.handle(post(toolCall("read", { path: "/x" }, "c1"), { "mcp-session-id": sid }));
		expect(await expectResult(res, "c1")).toEqual({ content: [{ type: "text", text: "done" }], isError: false });
		expect(h.server.callsServed).toBe(1);
		expect(h.calls[0]).toMatchObject({ name: "read", args: { path: "/x" }, caller: { sid } });
	});

	test("arguments absent -> tool gets {}", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		await h.server.handle(post(rpc("tools/call", { name: "read" }), { "mcp-session-id": sid }));
		expect(h.calls[0]?.args).toEqual({});
	});

	test("tool failure outcome -> 200 with isError true", async () => {
		const h = makeServer({
			callTool: async () => ({ content: [{ type: "text", text: "denied" }], isError: true }),
		});
		const sid = await initialize(h);
		const res = await h.server.handle(post(toolCall("write", {}), { "mcp-session-id": sid }));
		expect(await expectResult(res)).toEqual({ content: [{ type: "text", text: "denied" }], isError: true });
	});

	test("audit seam -> start, tool, done in order with the same id, sid, tool and args", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		await h.server.handle(post(toolCall("read", { path: "/a" }), { "mcp-session-id": sid }));
		const callId = h.calls[0]?.callId as string;
		expect(h.events).toEqual([`start:${callId}`, `tool:${callId}`, `done:${callId}`]);
		const who = { tokenName: "owner", client: null };
		expect(h.starts).toEqual([{ id: callId, sid, ...who, tool: "read", args: { path: "/a" } }]);
		expect(h.dones).toEqual([{ id: callId, sid, ...who, tool: "read", args: { path: "/a" }, isError: false }]);
	});

	test("audit start pending -> tool not run until it resolves", async () => {
		const gate = deferred();
		const started = deferred();
		const h = makeServer({
			auditStart: async () => {
				started.resolve();
				await gate.promise;
			},
		});
		const sid = await initialize(h);
		const pending = h.server.handle(post(toolCall("read", {}), { "mcp-session-id": sid }));
		await started.promise;
		expect(h.calls).toEqual([]);
		gate.resolve();
		expect((await pending).status).toBe(200);
		expect(h.calls.length).toBe(1);
	});

	test("audit done pending -> JSON response not sent until it resolves", async () => {
		const gate = deferred();
		const doneEntered = deferred();
		const h = makeServer({
			auditDone: async () => {
				doneEntered.resolve();
				await gate.promise;
			},
		});
		const sid = await initialize(h);
		let answered = false;
		const pending = h.server.handle(post(toolCall("read", {}), { "mcp-session-id": sid })).then(r => {
			answered = true;
			return r;
		});
		await doneEntered.promise;
		await settle();
		expect(answered).toBe(false);
		gate.resolve();
		expect((await pending).status).toBe(200);
	});

	test("audit done pending -> the SSE stream carries no final message until it resolves", async () => {
		const gate = deferred();
		const doneEntered = deferred();
		const h = makeServer({
			auditDone: async () => {
				doneEntered.resolve();
				await gate.promise;
			},
		});
		const sid = await initialize(h);
		const call = rpc("tools/call", { name: "read", arguments: {}, _meta: { progressToken: "p" } }, 4);
		const res = await h.server.handle(post(call, { "mcp-session-id": sid }));
		expect(res.headers.get("content-type")).toBe("text/event-stream");
		const body = new StreamReader(res);
		await doneEntered.promise;
		const early = await body.available();
		expect(early.ended).toBe(false);
		expect(early.text).not.toContain('"result"');
		gate.resolve();
		const rest = await body.all();
		expect(rest).toContain('"id":4,"result"');
	});

	test("audit done pending -> a cancelled call's -32800 not sent until it resolves", async () => {
		const gate = deferred();
		const doneEntered = deferred();
		const entered = deferred();
		const h = makeServer({
			callTool: () => {
				entered.resolve();
				return new Promise<ToolCallOutcome>(() => {});
			},
			auditDone: async () => {
				doneEntered.resolve();
				await gate.promise;
			},
		});
		const sid = await initialize(h);
		let answered = false;
		const pending = h.server.handle(post(toolCall("bash", {}, 8), { "mcp-session-id": sid })).then(r => {
			answered = true;
			return r;
		});
		await entered.promise;
		await h.server.handle(post(notification("notifications/cancelled", { requestId: 8 }), { "mcp-session-id": sid }));
		await doneEntered.promise;
		await settle();
		expect(answered).toBe(false);
		gate.resolve();
		await expectRpcError(await pending, 200, -32800, "request cancelled", 8);
	});

	test("audit done pending -> a throwing tool's 500 not sent until it resolves", async () => {
		const gate = deferred();
		const doneEntered = deferred();
		const h = makeServer({
			callTool: async () => {
				throw new Error("boom");
			},
			auditDone: async () => {
				doneEntered.resolve();
				await gate.promise;
			},
		});
		const sid = await initialize(h);
		let answered = false;
		const pending = h.server.handle(post(toolCall("read", {}), { "mcp-session-id": sid })).then(r => {
			answered = true;
			return r;
		});
		await doneEntered.promise;
		await settle();
		expect(answered).toBe(false);
		gate.resolve();
		expect((await pending).status).toBe(500);
	});

	test("cancelled call -> audit done has cancelled: true and isError: true", async () => {
		const { h, entered } = hangingServer();
		const sid = await initialize(h);
		const pending = h.server.handle(post(toolCall("bash", {}, "k"), { "mcp-session-id": sid }));
		const req = await entered.promise;
		await h.server.handle(post(notification("notifications/cancelled", { requestId: "k" }), { "mcp-session-id": sid }));
		await pending;
		expect(h.events).toEqual([`start:${req.callId}`, `tool:${req.callId}`, `done:${req.callId}`]);
		expect(h.dones[0]).toMatchObject({ id: req.callId, isError: true, cancelled: true });
	});

	test("throwing callTool -> an audit done record is still written", async () => {
		const h = makeServer({
			callTool: async () => {
				throw new Error("boom");
			},
		});
		const sid = await initialize(h);
		const res = await h.server.handle(post(toolCall("read", {}), { "mcp-session-id": sid }));
		expect(res.status).toBe(500);
		expect(h.starts.length).toBe(1);
		expect(h.dones.length).toBe(1);
		expect(h.dones[0]).toMatchObject({ id: h.starts[0]?.id, isError: true });
	});

	test("notifications/cancelled from another session -> call not cancelled", async () => {
		const entered = deferred<ToolCallRequest>();
		const release = deferred();
		const h = makeServer({
			callTool: async req => {
				entered.resolve(req);
				await release.promise;
				return OK_OUTCOME;
			},
		});
		const sid = await initialize(h);
		const other = await initialize(h);
		const pending = h.server.handle(post(toolCall("bash", {}, 7), { "mcp-session-id": sid }));
		const req = await entered.promise;
		const note = await h.server.handle(
			post(notification("notifications/cancelled", { requestId: 7 }), { "mcp-session-id": other }),
		);
		expect(note.status).toBe(202);
		expect(req.signal.aborted).toBe(false);
		release.resolve();
		expect(await expectResult(await pending, 7)).toEqual(OK_OUTCOME as unknown as Record<string, unknown>);
	});

	test("notifications/cancelled for an unknown id -> 202, ignored", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const note = await h.server.handle(
			post(notification("notifications/cancelled", { requestId: 999 }), { "mcp-session-id": sid }),
		);
		expect(note.status).toBe(202);
	});

	test("DELETE of a session -> its in-flight call answered -32800 and its signal aborted", async () => {
		const { h, entered } = hangingServer();
		const sid = await initialize(h);
		const pending = h.server.handle(post(toolCall("bash", {}, 11), { "mcp-session-id": sid }));
		const req = await entered.promise;
		const del = await h.server.handle(request("DELETE", "/", { "mcp-session-id": sid }));
		expect(del.status).toBe(204);
		await expectRpcError(await pending, 200, -32800, "request cancelled", 11);
		expect(req.signal.aborted).toBe(true);
		expect(h.dones[0]).toMatchObject({ cancelled: true });
	});
});

describe("BridgeServer token rotation", () => {
	test("setToken -> old token gets 401 invalid_token, new token works", async () => {
		const h = makeServer();
		h.server.setToken("owner", OTHER_TOKEN);
		expect(h.server.ownerSecret).toBe(OTHER_TOKEN);
		const old = await h.server.handle(post(rpc("initialize", {})));
		expect(old.status).toBe(401);
		expect(old.headers.get("www-authenticate")).toContain('error="invalid_token"');
		const fresh = await h.server.handle(post(rpc("initialize", {}), { authorization: `Bearer ${OTHER_TOKEN}` }));
		expect(fresh.status).toBe(200);
	});

	test("setToken -> sessions of the old token get 404 with the new token", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		h.server.setToken("owner", OTHER_TOKEN);
		const res = await h.server.handle(
			post(rpc("ping"), { "mcp-session-id": sid, authorization: `Bearer ${OTHER_TOKEN}` }),
		);
		await expectRpcError(res, 404, -32001, "session not found", 1);
	});

	test("setToken -> in-flight calls of old sessions are cancelled", async () => {
		const { h, entered } = hangingServer();
		const sid = await initialize(h);
		const pending = h.server.handle(post(toolCall("bash", {}, 1), { "mcp-session-id": sid }));
		const req = await entered.promise;
		h.server.setToken("owner", OTHER_TOKEN);
		await expectRpcError(await pending, 200, -32800, "request cancelled", 1);
		expect(req.signal.aborted).toBe(true);
	});
});

describe("BridgeServer unauthorized counter", () => {
	test("refusals -> a log line on the 1st and the 50th only, never containing the token", async () => {
		const h = makeServer();
		const refuse = () => h.server.handle(post(rpc("ping"), { authorization: "Bearer wrong-token" }));
		await refuse(); // 1st
		expect(h.logs.length).toBe(1);
		await refuse(); // 2nd
		expect(h.logs.length).toBe(1);
		for (let i = 3; i <= 49; i++) await refuse();
		expect(h.logs.length).toBe(1);
		await refuse(); // 50th
		expect(h.logs.length).toBe(2);
		expect(h.logs[1]).toContain("50");
		await refuse(); // 51st
		expect(h.logs.length).toBe(2);
		expect(h.logs.join("\n")).not.toContain(TOKEN);
		expect(h.logs.join("\n")).not.toContain("wrong-token");
	});
});

describe("BridgeServer extra routes", () => {
	function withBlobRoute() {
		const seen: Array<string | null> = [];
		const blob: ExtraRoute = {
			methods: ["GET", "POST"],
			body: "stream",
			handle: async (_req, ctx) => {
				seen.push(ctx.sid);
				return new Response("blob ok");
			},
		};
		return { h: makeServer({ opts: { routes: { "/blob": blob } } }), seen };
	}

	test("extra route without token -> 401, handler not called", async () => {
		const { h, seen } = withBlobRoute();
		const res = await h.server.handle(request("GET", "/blob", { authorization: null }));
		expect(res.status).toBe(401);
		expect(await res.json()).toEqual({ error: "unauthorized", code: "unauthorized" });
		const wrong = await h.server.handle(request("GET", "/blob", { authorization: "Bearer nope" }));
		expect(await wrong.json()).toEqual({ error: "unauthorized", code: "invalid_token" });
		expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
		expect(seen).toEqual([]);
	});

	test("extra route with a method it lacks -> 405 with its Allow list", async () => {
		const { h } = withBlobRoute();
		const res = await h.server.handle(request("DELETE", "/blob"));
		expect(res.status).toBe(405);
		expect(res.headers.get("allow")).toBe("GET, POST");
		expect(await res.json()).toEqual({ error: "method not allowed", code: "method_not_allowed" });
	});

	test("extra route -> handler gets the sid only when the bridge issued it", async () => {
		const { h, seen } = withBlobRoute();
		const sid = await initialize(h);
		expect((await h.server.handle(request("GET", "/blob", { "mcp-session-id": sid }))).status).toBe(200);
		await h.server.handle(request("GET", "/blob", { "mcp-session-id": "forged" }));
		await h.server.handle(request("GET", "/blob"));
		expect(seen).toEqual([sid, null, null]);
	});

	test("extra route with a bad Host -> 403", async () => {
		const { h } = withBlobRoute();
		const res = await h.server.handle(request("GET", "/blob", { host: "evil.com" }));
		expect(res.status).toBe(403);
		expect(await res.json()).toEqual({ error: "forbidden: Host header not allowed", code: "forbidden_host" });
	});

	test("extra route whose handler throws -> 500 {error, code}, detail only in the log", async () => {
		const boom: ExtraRoute = {
			methods: ["GET"],
			body: "stream",
			handle: async () => {
				throw new Error("secret detail");
			},
		};
		const h = makeServer({ opts: { routes: { "/blob": boom } } });
		const res = await h.server.handle(request("GET", "/blob"));
		expect(res.status).toBe(500);
		const text = await res.text();
		expect(text).not.toContain("secret detail");
		expect(JSON.parse(text)).toEqual({ error: "internal error", code: "internal_error" });
		const logged = h.logs.filter(l => l.includes("secret detail"));
		expect(logged.length).toBe(1);
		expect(logged[0]).toStartWith("a2a-bridge: internal error on GET /blob: Error: secret detail");
	});
});

describe("BridgeServer named tokens", () => {
	const CI = "ci-token-0123456789abcdefghijklmnopqrstuvwx";
	const named = () => makeServer({ opts: { tokens: [{ name: "ci", token: CI }] } });
	const as = (token: string, extra: Hdrs = {}) => ({ authorization: `Bearer ${token}`, ...extra });
	const init = async (h: Harness, token: string, client?: string) => {
		const params = {
			protocolVersion: "2025-11-25",
			capabilities: {},
			...(client ? { clientInfo: { name: client } } : {}),
		};
		const res = await h.server.handle(post(rpc("initialize", params), as(token)));
		return res.headers.get("mcp-session-id") as string;
	};

	test("a named token is a full caller; its calls carry its name and client", async () => {
		const h = named();
		const sid = await init(h, CI, "x\u001b]0;evil\u0007y");
		await expectResult(await h.server.handle(post(toolCall("read", {}), as(CI, { "mcp-session-id": sid }))));
		expect(h.calls[0]?.caller).toEqual({ sid, tokenName: "ci", client: "x ]0;evil y" });
		expect(h.starts[0]).toMatchObject({ tokenName: "ci", client: "x ]0;evil y" });
	});

	test("another token's session id -> 404, both ways", async () => {
		const h = named();
		const ci = await init(h, CI);
		const owner = await init(h, TOKEN);
		await expectRpcError(
			await h.server.handle(post(rpc("ping"), as(TOKEN, { "mcp-session-id": ci }))),
			404,
			-32001,
			"session not found",
			1,
		);
		await expectRpcError(
			await h.server.handle(post(rpc("ping"), as(CI, { "mcp-session-id": owner }))),
			404,
			-32001,
			"session not found",
			1,
		);
	});

	test("revokeToken -> its calls cancelled and sessions ended at once; the owner's call and session untouched", async () => {
		const { h, entered } = hangingServer();
		h.server.setToken("ci", CI);
		const ci = await init(h, CI);
		const owner = await init(h, TOKEN);
		const ciCall = h.server.handle(post(toolCall("bash", {}, 1), as(CI, { "mcp-session-id": ci })));
		const ciReq = await entered.promise;
		const ownerCall = h.server.handle(post(toolCall("bash", {}, 2), as(TOKEN, { "mcp-session-id": owner })));
		await Bun.sleep(0);
		expect(h.server.revokeToken("ci")).toBe(true);
		await expectRpcError(await ciCall, 200, -32800, "request cancelled", 1);
		expect(ciReq.signal.aborted).toBe(true);
		expect(h.dones).toEqual([expect.objectContaining({ tokenName: "ci", cancelled: true })]);
		expect((await h.server.handle(post(rpc("ping"), as(CI, { "mcp-session-id": ci })))).status).toBe(401);
		expect((await h.server.handle(post(rpc("ping"), as(TOKEN, { "mcp-session-id": owner })))).status).toBe(200);
		// The ci call's tool ignores its signal: it keeps its slot, cancelled, until it stops (contract §15).
		const live = [...h.server.inFlight.values()];
		expect(live.filter(c => !c.cancelled).map(c => c.tokenName)).toEqual(["owner"]);
		expect(live.filter(c => c.cancelled).map(c => c.tokenName)).toEqual(["ci"]);
		void ownerCall;
	});

	test("issue 38: revoke and rotate reach every kind through the server's one registry, prompts included; other tokens keep theirs", () => {
		// The host's prompt queue declares its bound (extensions/a2a-bridge.ts); without it prompts are refused.
		const h = makeServer({
			opts: { tokens: [{ name: "ci", token: CI }], bounds: { prompts: { each: 3, total: 256 } } },
		});
		h.server.setToken("bot", OTHER_TOKEN);
		const ended: string[] = [];
		const hold = (tokenName: string, kind: "prompts" | "digests") => {
			const got = h.server.holdings.take(kind, { tokenName }, reason => ended.push(`${tokenName}:${kind}:${reason}`));
			if (!got.ok) throw new Error(got.why);
			return got.slot;
		};
		const ciPrompt = hold("ci", "prompts");
		const botPrompt = hold("bot", "prompts");
		const ciDigest = hold("ci", "digests");
		h.server.revokeToken("ci");
		expect(ended.sort()).toEqual([
			"ci:digests:its token was revoked or rotated",
			"ci:prompts:its token was revoked or rotated",
		]);
		expect([ciPrompt.ended.aborted, ciDigest.ended.aborted, botPrompt.ended.aborted]).toEqual([true, true, false]);
		h.server.setToken("bot", `${OTHER_TOKEN}-new`);
		expect(botPrompt.ended.aborted).toBe(true);
	});

	test("setToken of a new name adds it without ending anything; of a live name replaces it and ends its sessions", async () => {
		const h = named();
		const ci = await init(h, CI);
		h.server.setToken("bot", OTHER_TOKEN);
		expect((await h.server.handle(post(rpc("ping"), as(CI, { "mcp-session-id": ci })))).status).toBe(200);
		h.server.setToken("ci", `${CI}-new`);
		expect((await h.server.handle(post(rpc("ping"), as(CI, { "mcp-session-id": ci })))).status).toBe(401);
		expect((await h.server.handle(post(rpc("ping"), as(`${CI}-new`, { "mcp-session-id": ci })))).status).toBe(404);
		expect(h.server.tokenNames()).toEqual(["owner", "ci", "bot"]);
	});

	test("extra routes get the caller's token name, and the sid only of that token's own session", async () => {
		const seen: unknown[] = [];
		const h = makeServer({
			opts: {
				tokens: [{ name: "ci", token: CI }],
				routes: {
					"/x": {
						methods: ["GET"],
						body: "stream",
						handle: async (_r, c) => {
							seen.push(c);
							return new Response("ok");
						},
					},
				},
			},
		});
		const ci = await init(h, CI, "cli");
		await h.server.handle(request("GET", "/x", as(CI, { "mcp-session-id": ci })));
		await h.server.handle(request("GET", "/x", as(TOKEN, { "mcp-session-id": ci })));
		expect(seen).toEqual([
			{
				sid: ci,
				tokenName: "ci",
				client: "cli",
				conn: NO_CONNECTION,
				ended: expect.any(AbortSignal),
				recheck: expect.any(Function),
				take: expect.any(Function),
			},
			{
				sid: null,
				tokenName: "owner",
				client: null,
				conn: NO_CONNECTION,
				ended: expect.any(AbortSignal),
				recheck: expect.any(Function),
				take: expect.any(Function),
			},
		]);
		// The route's identity check: nothing while the secret is live, the pipeline's 401 once it is revoked.
		const [asCi, asOwner] = seen as Array<{ recheck(): Response | undefined }>;
		expect(asCi?.recheck()).toBeUndefined();
		h.server.revokeToken("ci");
		const gone = asCi?.recheck();
		expect(gone?.status).toBe(401);
		expect(gone?.headers.get("www-authenticate")).toContain('error="invalid_token"');
		expect(await gone?.json()).toEqual({ error: "unauthorized", code: "invalid_token" });
		expect(asOwner?.recheck()).toBeUndefined();
	});

	test("issue 20 item 4: one token floods calls -> it stops at its share (128 of 256 with 2 tokens); the other still runs", async () => {
		const release = deferred();
		const h = makeServer({
			opts: { tokens: [{ name: "ci", token: CI }] },
			callTool: async () => {
				await release.promise;
				return OK_OUTCOME;
			},
		});
		const owner = await init(h, TOKEN, "flood");
		const ci = await init(h, CI, "quiet");
		const flood = Array.from({ length: 200 }, (_, i) =>
			h.server.handle(post(toolCall("read", {}, i), as(TOKEN, { "mcp-session-id": owner }))),
		);
		const ciCall = h.server.handle(post(toolCall("read", {}, "ci-1"), as(CI, { "mcp-session-id": ci })));
		await waitFor("129 calls entered", () => h.calls.length === 129, { timeoutMs: 10_000 });
		expect(h.calls.filter(c => c.caller.tokenName === "owner").length).toBe(128);
		expect(h.calls.filter(c => c.caller.tokenName === "ci").length).toBe(1);
		release.resolve();
		const answers = (await Promise.all(flood.map(async r => (await r).json()))) as Array<{
			error?: { message: string };
		}>;
		expect(answers.filter(a => a.error?.message === "server busy").length).toBe(72);
		expect(((await (await ciCall).json()) as { result?: unknown }).result).toBeDefined();
	});

	test("issue 20 item 3: a request whose headers passed but whose secret is revoked before its body ends -> 401, nothing runs", async () => {
		for (const change of ["revoke", "rotate"] as const) {
			const h = makeServer({ opts: { tokens: [{ name: "ci", token: CI }] } });
			const sid = await init(h, CI, "cli");
			const { body, push, end } = pushableBody();
			const req = request("POST", "/", as(CI, { "mcp-session-id": sid }), body);
			const answer = h.server.handle(req);
			// The headers were checked when handle() was called; the body is still on its way.
			push('{"jsonrpc":"2.0","id":5,"method":"tools/call",');
			if (change === "revoke") h.server.revokeToken("ci");
			else h.server.setToken("ci", `${CI}-rotated`);
			push('"params":{"name":"bash","arguments":{"command":"x"}}}');
			end();
			const res = await answer;
			expect(res.status).toBe(401);
			expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
			expect(h.calls.length).toBe(0);
		}
	});
});

describe("BridgeServer connection handle", () => {
	/** A handle that records what the pipeline asked of the connection. */
	const recording = () => {
		const log: string[] = [];
		const conn: Connection = {
			holdOpen: () => {
				log.push("hold");
				return () => log.push("release");
			},
			closeSoon: () => log.push("closeSoon"),
			cut: () => log.push("cut") < 0,
			sent: () => null,
			queued: () => null,
		};
		return { conn, log };
	};

	test("a tools/call holds the connection it came on open for its run, and releases it once", async () => {
		const h = makeServer();
		const sid = await initialize(h);
		const { conn, log } = recording();
		await expectResult(await h.server.handle(post(toolCall("read", {}), { "mcp-session-id": sid }), conn));
		expect(log).toEqual(["hold", "release"]);
		const other = recording();
		await h.server.handle(post(rpc("ping"), { "mcp-session-id": sid }), other.conn);
		expect(other.log).toEqual([]);
	});

	test("an extra route gets the very handle its request came with", async () => {
		const seen: Connection[] = [];
		const route: ExtraRoute = {
			methods: ["GET"],
			body: "stream",
			handle: async (_r, c) => {
				seen.push(c.conn);
				return new Response("ok");
			},
		};
		const h = makeServer({ opts: { routes: { "/x": route } } });
		const { conn } = recording();
		await h.server.handle(request("GET", "/x"), conn);
		expect(seen).toEqual([conn]);
	});
});
