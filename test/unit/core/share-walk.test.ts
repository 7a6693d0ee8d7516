/**
 * Issue 41 item 6: every slot kind is walked through the same share scenarios by its real owner — sessions
 * and calls through the server, uploads, downloads and digest hashes through `/blob`, approval prompts through
 * the prompt queue — each on the server's one registry, and each step must agree with the share rule restated
 * here. A new kind (SlotKind) needs an entry below; an owner that counts on its own fails a scenario.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { NO_CONNECTION } from "../../../src/core/idle.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import type { SlotBound, SlotKind, ToolCallOutcome } from "../../../src/core/types.ts";
import { PromptQueue } from "../../../src/host/prompt-queue.ts";

const BOUND = 4;
const ROOMY = 1024;
const secret = (name: string) => `${name}-secret-`.padEnd(43, "x");
const OWNER_SECRET = secret("owner");

/** The share rule as the contract states it (§16, §19), on the scenario's own counts. */
function allowed(bound: Exclude<SlotBound, null>, live: number, held: Map<string, number>, token: string): boolean {
	const [total, fixed] = typeof bound === "number" ? [bound, undefined] : [bound.total, bound.each];
	const each = fixed ?? Math.floor(total / live);
	const pool = Math.max(0, total - each * live);
	const cap = fixed ?? each + (pool > 0 ? 1 : 0);
	const mine = held.get(token) ?? 0;
	let used = 0;
	let poolUsed = 0;
	for (const n of held.values()) {
		used += n;
		poolUsed += Math.max(0, n - each);
	}
	return used < total && mine < cap && (mine < each || poolUsed < pool);
}

/** One kind's owner on a server whose registry bounds the kind at `bound` and everything else roomily. */
interface Walker {
	/** Asks the owner for one more of its kind as `token`: true when it holds one now, false when refused. */
	hold(token: string): Promise<boolean>;
	/** Lets go of everything held. */
	release(): Promise<void>;
}
type Walk = { bound: Exclude<SlotBound, null>; make(server: BridgeServer, dir: string): Walker };

/** Whether `answer` is still pending after the event loop ran a while (a held slot never answers). */
async function pending(answer: Promise<unknown>): Promise<boolean> {
	let done = false;
	answer.then(
		() => (done = true),
		() => (done = true),
	);
	for (let i = 0; i < 40 && !done; i++) await new Promise(r => setImmediate(r));
	return !done;
}

const request = (token: string, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
	new Request(`http://127.0.0.1:9${path}`, {
		...init,
		headers: {
			host: "127.0.0.1:9",
			authorization: `Bearer ${secret(token)}`,
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
			...init.headers,
		},
	});
const rpc = (method: string, params: Record<string, unknown>, id = 1) =>
	JSON.stringify({ jsonrpc: "2.0", id, method, params });
const VERSION = "2025-11-25";

/** A 2025 session of `token`, or null when refused. */
async function initialize(server: BridgeServer, token: string): Promise<string | null> {
	const body = rpc("initialize", { protocolVersion: VERSION, capabilities: {}, clientInfo: {} });
	const res = await server.handle(request(token, "/", { method: "POST", body }), NO_CONNECTION);
	return res.headers.get("mcp-session-id");
}

/** A tools/call in session `sid`; the tool (see `hanging`) runs until released. */
const callIn = (server: BridgeServer, token: string, sid: string, id: number) =>
	server.handle(
		request(token, "/", {
			method: "POST",
			body: rpc("tools/call", { name: "wait", arguments: {} }, id),
			headers: { "mcp-session-id": sid, "mcp-protocol-version": VERSION },
		}),
		NO_CONNECTION,
	);

/** A walker whose admitted requests stay unanswered until `stop`; a refused one is answered at once. */
function unanswered(ask: (token: string, n: number) => { answer: Promise<Response>; stop(): void }): Walker {
	const held: Array<ReturnType<typeof ask>> = [];
	return {
		async hold(token) {
			const one = ask(token, held.length + 1);
			held.push(one);
			return await pending(one.answer);
		},
		async release() {
			for (const one of held) one.stop();
			await Promise.all(held.splice(0).map(one => one.answer));
		},
	};
}

/** Tools that run until `release` (every call the server admits reaches one). */
const hanging = { stops: [] as Array<() => void> };
const DONE: ToolCallOutcome = { content: [{ type: "text", text: "done" }], isError: false };

const WALKS: Record<SlotKind, Walk | { exempt: string }> = {
	sessions: {
		bound: BOUND,
		make(server) {
			const opened: Array<[string, string]> = [];
			let id = 0;
			return {
				async hold(token) {
					const sid = await initialize(server, token);
					if (sid === null) return false;
					opened.push([token, sid]);
					// A call in flight keeps the session busy: over its share a token's idle session would make room.
					if (!(await pending(callIn(server, token, sid, ++id)))) throw new Error("the call did not run");
					return true;
				},
				async release() {
					for (const stop of hanging.stops.splice(0)) stop();
					for (const [token, sid] of opened.splice(0)) {
						const headers = { "mcp-session-id": sid, "mcp-protocol-version": VERSION };
						await server.handle(request(token, "/", { method: "DELETE", headers }), NO_CONNECTION);
					}
				},
			};
		},
	},
	calls: {
		bound: BOUND,
		make(server) {
			const sids = new Map<string, string>();
			const answers: Promise<Response>[] = [];
			let id = 0;
			return {
				async hold(token) {
					const sid = sids.get(token) ?? (await initialize(server, token));
					if (sid === null) throw new Error("no session");
					sids.set(token, sid);
					const answer = callIn(server, token, sid, ++id);
					answers.push(answer);
					return await pending(answer);
				},
				async release() {
					for (const stop of hanging.stops.splice(0)) stop();
					await Promise.all(answers.splice(0));
				},
			};
		},
	},
	uploads: {
		bound: BOUND,
		make: server =>
			unanswered((token, n) => {
				let body: ReadableStreamDefaultController<Uint8Array> | undefined;
				const stream = new ReadableStream<Uint8Array>({
					start: c => {
						body = c;
					},
				});
				const answer = server.handle(
					request(token, `/blob?path=up${n}`, { method: "PUT", body: stream }),
					NO_CONNECTION,
				);
				return { answer, stop: () => body?.close() };
			}),
	},
	downloads: {
		bound: BOUND,
		make(server, dir) {
			writeFileSync(join(dir, "cwd", "down"), "x".repeat(1 << 20));
			const bodies: Response[] = [];
			return {
				async hold(token) {
					// An unread body holds its slot.
					const res = await server.handle(request(token, "/blob?path=down"), NO_CONNECTION);
					if (res.status !== 200) return false;
					bodies.push(res);
					return true;
				},
				async release() {
					for (const res of bodies.splice(0)) await res.text();
				},
			};
		},
	},
	digests: {
		bound: BOUND,
		make: (server, dir) =>
			unanswered((token, n) => {
				// A file version of its own each time (joining a running hash is free), too big to hash meanwhile.
				writeFileSync(join(dir, "cwd", `sparse${n}`), "");
				truncateSync(join(dir, "cwd", `sparse${n}`), 64 * 1024 ** 3);
				const leave = new AbortController();
				const headers = { "want-repr-digest": "sha-256=1" };
				const req = request(token, `/blob?path=sparse${n}`, { headers, signal: leave.signal });
				return { answer: server.handle(req, NO_CONNECTION), stop: () => leave.abort() };
			}),
	},
	prompts: {
		// The host adapter's form: a bound per token (fixed, not divided) and one in all.
		bound: { each: 2, total: BOUND },
		make(server) {
			const queue = new PromptQueue();
			const stops: AbortController[] = [];
			const take = (token: string) => (onEnd: (reason: string) => void) =>
				server.holdings.take("prompts", { tokenName: token }, onEnd);
			const ask = (token: string) => {
				const stop = new AbortController();
				stops.push(stop);
				return queue.run(
					token,
					stop.signal,
					signal => new Promise(r => signal.addEventListener("abort", r)),
					take(token),
				);
			};
			// One prompt on screen (it holds no slot): every other waits its turn in a slot.
			void ask("owner").catch(() => {});
			return {
				async hold(token) {
					const answer = ask(token);
					answer.catch(() => {});
					return await pending(answer);
				},
				async release() {
					for (const stop of stops.splice(0)) stop.abort();
				},
			};
		},
	},
	tasks: { exempt: "bounded by its owner per token, by count and kept bytes (core/tasks.ts); not shared" },
};

/** Named tokens beside the owner, and the order tokens ask in (each step checked against the rule). */
const SCENARIOS: Array<{ what: string; named: string[]; asks: string[] }> = [
	{ what: "2 live tokens", named: ["a"], asks: ["a", "a", "a", "owner", "owner", "owner"] },
	{ what: "3 live tokens, a pool of 1", named: ["a", "b"], asks: ["a", "a", "a", "b", "b", "owner", "owner"] },
	{ what: "more tokens than slots", named: ["a", "b", "c", "d", "e"], asks: ["a", "a", "b", "c", "d", "e"] },
];

describe("every slot kind follows the one share rule (issue 41 item 6)", () => {
	let dir: string;
	beforeAll(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-share-walk-"));
		mkdirSync(join(dir, "home"));
		mkdirSync(join(dir, "cwd"));
	});
	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	const serverFor = (kind: SlotKind, bound: Exclude<SlotBound, null>, named: string[]) => {
		const bounds = { sessions: ROOMY, calls: ROOMY, uploads: ROOMY, downloads: ROOMY, digests: ROOMY, [kind]: bound };
		const blob = createBlobRoute({
			home: () => join(dir, "home"),
			cwd: () => join(dir, "cwd"),
			audit: () => {},
			log: () => {},
			config: () => ({ blob: "write" }),
		});
		const deps = {
			version: "1",
			instructions: "",
			listTools: () => [{ name: "wait", description: "waits", inputSchema: { type: "object" } }],
			callTool: () => new Promise<ToolCallOutcome>(r => hanging.stops.push(() => r(DONE))),
			log: () => {},
		};
		return new BridgeServer(deps, {
			ownerSecret: OWNER_SECRET,
			tokens: named.map(name => ({ name, token: secret(name) })),
			bindHost: "127.0.0.1",
			isLoopbackBind: true,
			allowedOrigins: [],
			routes: { "/blob": blob },
			bounds,
		});
	};

	test("every kind is walked or named as bounded elsewhere", () => {
		const exempt = Object.entries(WALKS).filter(([, w]) => "exempt" in w);
		expect(exempt.map(([k]) => k)).toEqual(["tasks"]);
	});

	for (const [kind, walk] of Object.entries(WALKS) as Array<[SlotKind, Walk | { exempt: string }]>) {
		if ("exempt" in walk) continue;
		for (const { what, named, asks } of SCENARIOS) {
			test(`${kind}: ${what}`, async () => {
				const server = serverFor(kind, walk.bound, named);
				const walker = walk.make(server, dir);
				const held = new Map<string, number>();
				const steps: string[] = [];
				try {
					for (const token of asks) {
						const expected = allowed(walk.bound, named.length + 1, held, token);
						const got = await walker.hold(token);
						steps.push(`${token}:${got ? "held" : "refused"}`);
						expect({ steps, expected: got === expected }).toEqual({ steps, expected: true });
						if (got) held.set(token, (held.get(token) ?? 0) + 1);
					}
					// What was held is free again: the token that asked first is admitted anew.
					await walker.release();
					expect(await walker.hold(asks[0] as string)).toBe(true);
				} finally {
					// Nothing outlives the test (a 64 GiB hash would run on).
					await walker.release();
				}
			});
		}
	}
});
