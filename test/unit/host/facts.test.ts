/**
 * Issue 40 item 1: the bridge checks the host it is in. A fake host with every fact the bridge relies on,
 * then each fact removed in turn: the probe names it, host stderr gets its one line, `/a2a status` says it,
 * and what the fact carries is refused by name (tools/list, tools/call, the takeover) or still served.
 */
import { describe, expect, test } from "bun:test";
import { serveRoute } from "../../../src/core/route-kit.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import type { ToolCallRequest } from "../../../src/core/types.ts";
import { statusText } from "../../../src/host/commands.ts";
import { FACTS, type FactCheck, type FactId, factStatus, KNOWN_GOOD, refusalFor } from "../../../src/host/facts.ts";
import { authCheck, checkHost, factsFor, probeHostFacts } from "../../../src/host/facts-probe.ts";
import { createHostLlmRoute } from "../../../src/takeover/route.ts";
import { Takeover } from "../../../src/takeover/takeover.ts";
import { type Fake, fakeHost, type Obj } from "../../helpers/fact-host.ts";
import { FakeHost } from "../../helpers/fake-takeover-host.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

/** Each fact and how a newer host might lose it. */
const REMOVALS: Record<FactId, (h: Fake) => void> = {
	"main-session": h => {
		h.registry.global = undefined;
	},
	"main-cwd": h => {
		delete (h.session.sessionManager as Obj).getCwd;
	},
	"tool-registry": h => {
		delete h.session.getToolByName;
	},
	"tool-execute": h => {
		// No execute on the listed tool: not the gate's either (its execute is the gate's own).
		Object.defineProperty(h.tools.bash, "execute", { value: undefined, configurable: true });
	},
	"approval-gate": h => {
		// The tool as it is, not the wrapper that asks: its own execute, no runner.
		h.tools.bash = { ...(h.tools.bash?.tool as Obj), formatApprovalDetails: () => [] };
	},
	"validate-args": h => {
		delete h.ai.validateToolArguments;
	},
	"wire-schema": h => {
		h.ai.toolWireSchema = () => {
			throw new Error("unknown schema kind");
		};
	},
	"prompt-ui": h => {
		(h.session.extensionRunner as Obj).getUIContext = () => ({});
	},
	"call-events": h => {
		(h.session.agent as Obj).emitExternalEvent = undefined;
	},
	"approval-details": h => {
		delete h.tools.bash?.formatApprovalDetails;
	},
	"lenient-args": h => {
		delete h.tools.todo?.lenientArgValidation;
	},
	"async-jobs": h => {
		delete (h.session.asyncJobManager as Obj).getJob;
	},
	"provider-layer": h => {
		(h.session.modelRegistry as Obj).authStorage = { credentials: {} };
	},
};

const TOKEN = "t".repeat(43);
function server(checks: readonly FactCheck[], calls: ToolCallRequest[]) {
	return new BridgeServer(
		{
			version: "0",
			instructions: "unit",
			listTools: () => [{ name: "read", description: "", inputSchema: { type: "object" } }],
			callTool: async req => {
				calls.push(req);
				return { content: [{ type: "text", text: "ran" }], isError: false };
			},
			unavailable: method => refusalFor(checks, method),
			log: () => {},
		},
		{ ownerSecret: TOKEN, bindHost: "127.0.0.1", isLoopbackBind: true, allowedOrigins: [] },
	);
}

/** tools/list and tools/call on the 2026-07-28 era (no session), answered as JSON. */
async function rpc(s: BridgeServer, method: string, params: Obj = {}) {
	const res = await s.handle(
		new Request("http://127.0.0.1:9/", {
			method: "POST",
			headers: {
				host: "127.0.0.1:9",
				authorization: `Bearer ${TOKEN}`,
				"content-type": "application/json",
				accept: "application/json, text/event-stream",
				"mcp-protocol-version": "2026-07-28",
				"mcp-method": method,
				...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
			},
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 7,
				method,
				params: {
					...params,
					_meta: {
						"io.modelcontextprotocol/protocolVersion": "2026-07-28",
						"io.modelcontextprotocol/clientCapabilities": {},
						"io.modelcontextprotocol/clientInfo": { name: "unit", version: "0" },
					},
				},
			}),
		}),
	);
	return {
		status: res.status,
		body: (await res.json()) as { result?: Obj; error?: { code: number; message: string } },
	};
}

const status = (checks: readonly FactCheck[]) =>
	statusText({
		url: "http://127.0.0.1:9/",
		ownerSecret: TOKEN,
		sessions: 0,
		callsServed: 0,
		inFlight: [],
		takeover: "allow",
		auditPath: "/x",
		hostFacts: factStatus(checks),
	});

describe("host facts (issue 40 item 1)", () => {
	test("the fake host as 18.2.3 shapes it: every fact holds, no stderr line, /a2a says they hold", () => {
		const h = fakeHost();
		const lines: string[] = [];
		const checks = checkHost({ registry: h.registry, ai: h.ai }, l => lines.push(l));
		expect(checks.map(c => c.fact)).toEqual(Object.keys(FACTS) as FactId[]);
		expect(checks.filter(c => !c.ok)).toEqual([]);
		expect(lines).toEqual([]);
		expect(status(checks)).toContain(`host facts: all ${checks.length} hold`);
		for (const what of ["tools/list", "tools/call", "takeover"] as const) expect(refusalFor(checks, what)).toBeNull();
	});

	for (const fact of Object.keys(REMOVALS) as FactId[]) {
		test(`${fact} removed: named on stderr and in /a2a status; ${FACTS[fact].refuses.join(", ") || "nothing"} refused by name`, async () => {
			const h = fakeHost();
			REMOVALS[fact](h);
			const lines: string[] = [];
			const checks = checkHost({ registry: h.registry, ai: h.ai }, l => lines.push(l));
			const mine = checks.find(c => c.fact === fact);
			expect(mine?.ok).toBe(false);
			expect(mine?.why).not.toBe("");
			// Only the removed fact, and what cannot be looked at without it (no Main: nothing in it).
			const missing = checks.filter(c => !c.ok).map(c => c.fact);
			if (fact !== "main-session")
				expect(missing).toEqual(
					fact === "tool-registry"
						? ["tool-registry", "tool-execute", "approval-gate"]
						: fact === "tool-execute"
							? ["tool-execute", "approval-gate"]
							: [fact],
				);
			const line = lines.find(l => l.includes(`host fact '${fact}' missing`));
			expect(line).toBe(
				`a2a-bridge: host fact '${fact}' missing (${mine?.why}): ${FACTS[fact].turnsOff}; known to work: ${KNOWN_GOOD}`,
			);
			expect(lines.length).toBe(missing.length);
			expect(status(checks)).toContain(`host fact '${fact}' missing: ${FACTS[fact].turnsOff}`);
			expect(status(checks)).not.toContain("host facts: all");

			// Served behaviour: what the fact refuses answers host_fact_missing naming it; the rest is served.
			const calls: ToolCallRequest[] = [];
			const s = server(checks, calls);
			const list = await rpc(s, "tools/list");
			const call = await rpc(s, "tools/call", { name: "read", arguments: {} });
			for (const [method, r] of [
				["tools/list", list],
				["tools/call", call],
			] as const) {
				const refuses = checks.some(c => !c.ok && FACTS[c.fact].refuses.includes(method));
				if (refuses) {
					expect(r.status).toBe(200);
					expect(r.body.error?.code).toBe(-32000);
					expect(r.body.error?.message).toContain(`${method} unavailable: host fact '`);
					expect(r.body.error?.message).toContain(KNOWN_GOOD);
				} else {
					expect(r.body.error).toBeUndefined();
				}
			}
			// Second channel: the tool ran only where tools/call is served.
			expect(calls.length).toBe(refusalFor(checks, "tools/call") === null ? 1 : 0);

			const takeoverHost = new FakeHost();
			takeoverHost.unavailable = () => refusalFor(checks, "takeover");
			const route = createHostLlmRoute(new Takeover(takeoverHost, () => {}));
			const res = await serveRoute(
				route,
				new Request("http://127.0.0.1:9/host-llm", { method: "POST", body: '{"enabled":false}' }),
				routeCtx(),
			);
			const body = (await res.json()) as Obj;
			if (FACTS[fact].refuses.includes("takeover") || fact === "main-session") {
				expect(res.status).toBe(409);
				expect(body.code).toBe("cannot_arm");
				expect(String(body.error)).toStartWith("takeover unavailable: host fact '");
				// Nothing armed: the host's fetch and Main's row untouched.
				expect(takeoverHost.fetchFn).toBe(takeoverHost.original);
				expect(takeoverHost.denyApi).toBe(false);
			} else {
				expect(res.status).toBe(200);
				expect(body.enabled).toBe(false);
			}
		});
	}

	test("the 2025 era refuses the same way: tools/list and tools/call answer host_fact_missing in a session", async () => {
		const h = fakeHost();
		REMOVALS["tool-registry"](h);
		const calls: ToolCallRequest[] = [];
		const s = server(probeHostFacts({ registry: h.registry, ai: h.ai }), calls);
		const post = (body: Obj, sid?: string) =>
			s.handle(
				new Request("http://127.0.0.1:9/", {
					method: "POST",
					headers: {
						host: "127.0.0.1:9",
						authorization: `Bearer ${TOKEN}`,
						"content-type": "application/json",
						accept: "application/json, text/event-stream",
						...(sid ? { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" } : {}),
					},
					body: JSON.stringify({ jsonrpc: "2.0", ...body }),
				}),
			);
		const init = await post({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25" } });
		const sid = init.headers.get("mcp-session-id") ?? "";
		expect(sid).not.toBe("");
		for (const [id, method, params] of [
			[2, "tools/list", {}],
			[3, "tools/call", { name: "read", arguments: {} }],
		] as const) {
			const res = await post({ id, method, params }, sid);
			expect(res.status).toBe(200);
			const body = (await res.json()) as { error?: { code: number; message: string } };
			expect(body.error?.code).toBe(-32000);
			expect(body.error?.message).toStartWith(`${method} unavailable: host fact 'tool-registry' missing (`);
		}
		expect(calls.length).toBe(0);
	});

	test("a later Main is probed again: the same session keeps the probe, another one is looked at and said", () => {
		const h = fakeHost();
		const lines: string[] = [];
		const host = { registry: h.registry, ai: h.ai };
		const first = factsFor(host, h.session, l => lines.push(l));
		expect(first.every(c => c.ok)).toBe(true);
		expect(factsFor(host, h.session, l => lines.push(l))).toBe(first);
		// Main is now another session whose tools are not behind the gate (a newer host, a replaced session).
		const later = fakeHost();
		REMOVALS["approval-gate"](later);
		h.registry.global = later.registry.global;
		const again = factsFor(host, later.session, l => lines.push(l));
		expect(again.find(c => c.fact === "approval-gate")?.ok).toBe(false);
		expect(lines).toEqual([expect.stringContaining("host fact 'approval-gate' missing")]);
		expect(factsFor(host, later.session, l => lines.push(l))).toBe(again);
		expect(lines.length).toBe(1);
	});

	test("the takeover's unavailable sentence names the provider layer", () => {
		const h = fakeHost();
		REMOVALS["provider-layer"](h);
		const checks = probeHostFacts({ registry: h.registry, ai: h.ai });
		expect(FACTS["provider-layer"].turnsOff).toBe("takeover unavailable: the provider layer moved");
		expect(refusalFor(checks, "takeover")).toContain("modelRegistry.authStorage has neither hasAuth nor keys.source");
	});

	test("omp 18.3's auth storage (keys.source instead of hasAuth) holds the provider layer", () => {
		const h = fakeHost();
		const source = (p: string) => (p === "anthropic" ? "config" : undefined);
		(h.session.modelRegistry as Obj).authStorage = { keys: { source } };
		const checks = probeHostFacts({ registry: h.registry, ai: h.ai });
		expect(checks.find(c => c.fact === "provider-layer")?.ok).toBe(true);
		const has = authCheck({ keys: { source } });
		expect([has?.("anthropic"), has?.("openai")]).toEqual([true, false]);
		expect(authCheck({ hasAuth: (p: string) => p === "x" })?.("x")).toBe(true);
		expect(authCheck({})).toBeNull();
		expect(authCheck(null)).toBeNull();
	});

	test("hostile host objects: throwing getters and lookups, junk lists; the probe names them and never throws", () => {
		const cases: Array<[string, (h: Fake) => void, FactId]> = [
			[
				"global() throws",
				h => {
					h.registry.global = () => {
						throw new Error("registry gone");
					};
				},
				"main-session",
			],
			[
				"get is not a function",
				h => {
					h.registry.global = () => ({ get: 3 });
				},
				"main-session",
			],
			[
				"getAllToolNames throws",
				h => {
					h.session.getAllToolNames = () => {
						throw new Error("no");
					};
				},
				"tool-registry",
			],
			[
				"getAllToolNames gives a string",
				h => {
					h.session.getAllToolNames = () => "read";
				},
				"tool-registry",
			],
			[
				"getToolByName throws for every name",
				h => {
					h.session.getToolByName = () => {
						throw new Error("moved");
					};
				},
				"tool-registry",
			],
			[
				"getUIContext throws",
				h => {
					(h.session.extensionRunner as Obj).getUIContext = () => {
						throw new Error("no ui");
					};
				},
				"prompt-ui",
			],
			[
				"getUIContext gives another object each call: a lent select would not be the one omp asks",
				h => {
					(h.session.extensionRunner as Obj).getUIContext = () => ({ select: async () => "Approve" });
				},
				"prompt-ui",
			],
			[
				"a tool's wrapper holds another runner than Main's",
				h => {
					(h.tools.read as Obj).runner = { getUIContext: () => ({}) };
				},
				"approval-gate",
			],
			[
				"getCwd throws",
				h => {
					h.session.sessionManager = {
						getCwd: () => {
							throw new Error("gone");
						},
					};
				},
				"main-cwd",
			],
			[
				"getCwd gives a relative path",
				h => {
					h.session.sessionManager = { getCwd: () => "work" };
				},
				"main-cwd",
			],
			[
				"toolWireSchema gives a string",
				h => {
					h.ai.toolWireSchema = () => "object";
				},
				"wire-schema",
			],
		];
		for (const [, spoil, fact] of cases) {
			const h = fakeHost();
			spoil(h);
			const checks = probeHostFacts({ registry: h.registry, ai: h.ai });
			expect(checks.find(c => c.fact === fact)?.ok).toBe(false);
		}
		expect(
			probeHostFacts({ registry: null, ai: {} }).every(
				c => c.fact === "lenient-args" || c.fact === "approval-details" || !c.ok,
			),
		).toBe(true);
		expect(probeHostFacts({ registry: 42, ai: null as unknown as Obj }).find(c => c.fact === "main-session")?.ok).toBe(
			false,
		);
	});
});
