/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json; server mode,
 * the scenarios its `--requirements 2025-11-25` set lists; the 2026-07-28 set is conformance-2026.test.ts) against a
 * real omp host with the bridge, through a loopback proxy that adds the Bearer token (the suite sends
 * none). Each scenario runs as `conformance server --url <proxy> --scenario <name> -o <dir>` under Bun
 * (its dist needs `fs.globSync`, which Node 20 lacks); the test reads `checks.json` and asserts that no
 * check failed and at least one succeeded (a scenario made only of INFO checks would prove nothing).
 *
 * Run (7): server-initialize, ping, tools-list, server-sse-multiple-streams, dns-rebinding-protection,
 *   server-session-lifecycle,
 *   tools-call-error — it calls `test_error_handling`, which the bridge does not expose, and checks for an
 *   `isError: true` result with a text: exactly the bridge's "not exposed" answer (contract §6.4).
 *
 * Not run (26): each needs something the bridge does not offer. Instead of a skip, each gets a check of
 * what the bridge promises in its place (contract §6), on the same host:
 * - a suite test tool (`test_simple_text`, `test_sampling`, `json_schema_2020_12_tool`, ...) is absent from
 *   tools/list and calling it gets the "not exposed" result; for the server-to-client scenarios (sampling,
 *   elicitation) the call's SSE stream carries no request from the server, only the final response;
 * - a capability the bridge does not advertise (resources, prompts, logging, completions) is absent from
 *   `initialize` and each of its methods answers `-32601 method not found`;
 * - SSE polling and resumption: no GET stream to resume (GET -> 405, Allow: POST, DELETE).
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { conformance } from "../../helpers/conformance.ts";
import { Host } from "../../helpers/host.ts";
import { type AuthProxy, startAuthProxy } from "../../helpers/proxy.ts";

const RUN = [
	"server-initialize",
	"ping",
	"tools-list",
	"tools-call-error",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
	"server-session-lifecycle",
] as const;

/** What a scenario the bridge cannot run needs, and so what is checked in its place. */
interface NotOffered {
	/** The suite's own tool the scenario calls. */
	tool?: string;
	/** The scenario needs server-to-client requests: the tool's SSE stream must carry none. */
	serverToClient?: boolean;
	/** A capability the bridge does not advertise, and methods of it the scenario sends. */
	capability?: string;
	methods?: Array<[string, Record<string, unknown>]>;
	/** The scenario needs a GET stream to poll and resume. */
	getStream?: boolean;
}

const NOT_OFFERED: Record<string, NotOffered> = {
	"tools-call-simple-text": { tool: "test_simple_text" },
	"tools-call-image": { tool: "test_image_content" },
	"tools-call-audio": { tool: "test_audio_content" },
	"tools-call-embedded-resource": { tool: "test_embedded_resource" },
	"tools-call-mixed-content": { tool: "test_multiple_content_types" },
	"tools-call-with-progress": { tool: "test_tool_with_progress" },
	"logging-set-level": { capability: "logging", methods: [["logging/setLevel", { level: "info" }]] },
	"tools-call-with-logging": {
		tool: "test_tool_with_logging",
		capability: "logging",
		methods: [["logging/setLevel", { level: "debug" }]],
	},
	"completion-complete": {
		capability: "completions",
		methods: [
			[
				"completion/complete",
				{ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "a" } },
			],
		],
	},
	"tools-call-sampling": { tool: "test_sampling", serverToClient: true },
	"tools-call-elicitation": { tool: "test_elicitation", serverToClient: true },
	"elicitation-sep1034-defaults": { tool: "test_elicitation_sep1034_defaults", serverToClient: true },
	"elicitation-sep1330-enums": { tool: "test_elicitation_sep1330_enums", serverToClient: true },
	"json-schema-2020-12": { tool: "json_schema_2020_12_tool" },
	"server-sse-polling": { tool: "test_reconnection", getStream: true },
	"resources-list": { capability: "resources", methods: [["resources/list", {}]] },
	"resources-read-text": { capability: "resources", methods: [["resources/read", { uri: "test://static-text" }]] },
	"resources-read-binary": { capability: "resources", methods: [["resources/read", { uri: "test://static-binary" }]] },
	"resources-templates-read": {
		capability: "resources",
		methods: [
			["resources/templates/list", {}],
			["resources/read", { uri: "test://template/123/data" }],
		],
	},
	"resources-subscribe": { capability: "resources", methods: [["resources/subscribe", { uri: "test://static-text" }]] },
	"resources-unsubscribe": {
		capability: "resources",
		methods: [["resources/unsubscribe", { uri: "test://static-text" }]],
	},
	"prompts-list": { capability: "prompts", methods: [["prompts/list", {}]] },
	"prompts-get-simple": { capability: "prompts", methods: [["prompts/get", { name: "test_simple_prompt" }]] },
	"prompts-get-with-args": {
		capability: "prompts",
		methods: [["prompts/get", { name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } }]],
	},
	"prompts-get-embedded-resource": {
		capability: "prompts",
		methods: [["prompts/get", { name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://x" } }]],
	},
	"prompts-get-with-image": { capability: "prompts", methods: [["prompts/get", { name: "test_prompt_with_image" }]] },
};

interface Check {
	id: string;
	name: string;
	status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
	errorMessage?: string;
	details?: Record<string, unknown>;
}

interface Outcome {
	code: number | null;
	stdout: string;
	stderr: string;
	checks: Check[];
}

let host: Host;
let proxy: AuthProxy;
let outRoot: string;

async function runScenario(name: string): Promise<Outcome> {
	const dir = join(outRoot, name);
	const res = await conformance(["server", "--url", proxy.url, "--scenario", name, "-o", dir]);
	// The suite writes <dir>/server-<scenario>-<timestamp>/checks.json.
	const sub = readdirSync(dir, { withFileTypes: true }).find(d => d.isDirectory());
	const checks = sub ? (JSON.parse(readFileSync(join(dir, sub.name, "checks.json"), "utf8")) as Check[]) : [];
	return { ...res, checks };
}

function explain(name: string, o: Outcome): string {
	const failed = o.checks
		.filter(c => c.status === "FAILURE")
		.map(c => `${c.id}: ${c.errorMessage ?? ""} ${JSON.stringify(c.details ?? {})}`);
	return [
		`scenario ${name}: exit ${o.code}`,
		...failed,
		`--- conformance stdout (tail) ---`,
		o.stdout.slice(-2000),
		`--- conformance stderr (tail) ---`,
		o.stderr.slice(-1000),
		`--- host stderr (tail) ---`,
		host.stderr.slice(-1000),
	].join("\n");
}

function byId(o: Outcome, id: string): Check | undefined {
	return o.checks.find(c => c.id === id);
}

function describeCheck(need: NotOffered): string {
	const parts: string[] = [];
	if (need.tool) parts.push(`${need.tool} not listed and answered "not exposed"`);
	if (need.serverToClient) parts.push("no server-to-client request on its SSE stream");
	if (need.capability)
		parts.push(`no ${need.capability} capability, ${need.methods?.map(m => m[0]).join(", ")} -> -32601`);
	if (need.getStream) parts.push("GET -> 405 (no stream to resume)");
	return parts.join("; ");
}

/** One JSON-RPC exchange with the host (straight, with the token), answered as JSON or SSE events. */
async function exchange(body: unknown, sid: string | null, accept = "application/json"): Promise<Response> {
	return fetch(host.url, {
		method: "POST",
		headers: host.headers({ accept, ...(sid ? { "mcp-session-id": sid } : {}) }),
		body: JSON.stringify(body),
	});
}

async function checkNotOffered(need: NotOffered): Promise<void> {
	const init = await exchange(
		{ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } },
		null,
	);
	const sid = init.headers.get("mcp-session-id");
	const capabilities = ((await init.json()) as { result: { capabilities: Record<string, unknown> } }).result
		.capabilities;
	expect(capabilities).toEqual({ tools: { listChanged: false } });
	if (need.capability) expect(capabilities[need.capability]).toBeUndefined();
	for (const [i, [method, params]] of (need.methods ?? []).entries()) {
		const res = await exchange({ jsonrpc: "2.0", id: 10 + i, method, params }, sid);
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({
			jsonrpc: "2.0",
			id: 10 + i,
			error: { code: -32601, message: "method not found" },
		});
	}
	if (need.tool) {
		const list = await exchange({ jsonrpc: "2.0", id: 1, method: "tools/list" }, sid);
		const names = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(t => t.name);
		expect(names).toContain("read");
		expect(names).not.toContain(need.tool);
		const call = { name: need.tool, arguments: {}, _meta: { progressToken: "conformance" } };
		const res = await exchange(
			{ jsonrpc: "2.0", id: 2, method: "tools/call", params: call },
			sid,
			need.serverToClient ? "application/json, text/event-stream" : "application/json",
		);
		const text = await res.text();
		// Over SSE: every message is the final response; nothing the server asks the client.
		const messages = need.serverToClient
			? text
					.split("\n\n")
					.filter(b => b.startsWith("data: "))
					.map(b => JSON.parse(b.slice(6)) as Record<string, unknown>)
			: [JSON.parse(text) as Record<string, unknown>];
		if (need.serverToClient) expect(res.headers.get("content-type")).toBe("text/event-stream");
		expect(messages.filter(m => "method" in m)).toEqual([]);
		expect(messages).toEqual([
			{
				jsonrpc: "2.0",
				id: 2,
				result: {
					content: [{ type: "text", text: `tool '${need.tool}' is not exposed by this bridge` }],
					isError: true,
				},
			},
		]);
	}
	if (need.getStream) {
		const res = await fetch(host.url, {
			method: "GET",
			headers: host.headers({ accept: "text/event-stream", ...(sid ? { "mcp-session-id": sid } : {}) }),
		});
		expect(res.status).toBe(405);
		expect(res.headers.get("allow")).toBe("POST, DELETE");
		await res.body?.cancel();
	}
	const del = await fetch(host.url, { method: "DELETE", headers: host.headers({ "mcp-session-id": sid ?? "" }) });
	expect(del.status).toBe(204);
}

describe("MCP conformance suite (server scenarios) through a Bearer-adding proxy", () => {
	beforeAll(async () => {
		outRoot = mkdtempSync(join(tmpdir(), "a2a-conformance-"));
		host = await Host.start();
		proxy = startAuthProxy(host.url, host.token);
	}, 60_000);

	afterAll(async () => {
		await proxy?.stop();
		await host?.stop();
		host?.cleanup();
		if (outRoot) rmSync(outRoot, { recursive: true, force: true });
	}, 30_000);

	test("every server scenario of the suite is either run or replaced by a check of what the bridge offers instead", async () => {
		const res = await conformance(["list", "--server", "--requirements", "2025-11-25"]);
		expect(res.code).toBe(0);
		// The required server section, then the never-scored ones tagged [server] (client-side ones are not ours).
		const server = res.stdout.split(/^Client scenarios/m)[0] ?? "";
		const later = res.stdout.split(/^Run and reported, but never scored/m)[1] ?? "";
		const listed = [
			...[...server.matchAll(/^\s+- (\S+)$/gm)].map(m => m[1] as string),
			...[...later.matchAll(/^\s+- (\S+) \[server\]$/gm)].map(m => m[1] as string),
		].sort();
		expect(listed.length).toBeGreaterThan(0);
		expect(listed).toEqual([...RUN, ...Object.keys(NOT_OFFERED)].sort());
	}, 30_000);

	for (const name of RUN) {
		test(name, async () => {
			const before = proxy.forwarded;
			const o = await runScenario(name);
			const why = explain(name, o);
			expect(proxy.forwarded, "the scenario's requests went through the proxy").toBeGreaterThan(before);
			expect(
				o.checks.filter(c => c.status === "FAILURE").map(c => c.id),
				why,
			).toEqual([]);
			expect(o.checks.filter(c => c.status === "SUCCESS").length, why).toBeGreaterThan(0);
			expect(o.code, why).toBe(0);

			// Scenario-specific: make sure a pass is the bridge's own behaviour, not an accident.
			if (name === "tools-list") {
				const tools = byId(o, "tools-list")?.details?.tools as string[] | undefined;
				expect(tools, why).toContain("read");
				expect(tools, why).toContain("bash");
				// The conformance fixtures (test/fixtures/tasks-fixture-ext.ts) never reach a host without them.
				expect(tools, why).not.toContain("slow_compute");
			}
			if (name === "tools-call-error") {
				const result = byId(o, "tools-call-error")?.details?.result as
					| { isError?: boolean; content?: Array<{ type: string; text?: string }> }
					| undefined;
				expect(result?.isError, why).toBe(true);
				expect(result?.content, why).toEqual([
					{ type: "text", text: "tool 'test_error_handling' is not exposed by this bridge" },
				]);
			}
			if (name === "dns-rebinding-protection") {
				// Contract §4 step 2: a foreign Host/Origin gets exactly 403 (the suite accepts any 4xx).
				expect(byId(o, "localhost-host-rebinding-rejected")?.details?.statusCode, why).toBe(403);
				expect(byId(o, "localhost-host-valid-accepted")?.details?.statusCode, why).toBe(200);
			}
		}, 30_000);
	}

	for (const [name, need] of Object.entries(NOT_OFFERED)) {
		test(`${name}: not offered by the bridge; ${describeCheck(need)}`, async () => {
			await checkNotOffered(need);
		}, 30_000);
	}
});
