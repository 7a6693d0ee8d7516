/**
 * Host inference takeover against the real host (issue 6): a counting fake provider on loopback is
 * the only model endpoint in models.yml, so every request that leaves the process is counted there.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DENY_MESSAGE } from "../../../src/takeover/plan.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { type FakeModel, modelsYml, startFakeModel } from "../../helpers/fake-model.ts";
import { callTool, Host, openSession, type RpcFrame } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures");
const PROBE = join(FIXTURES, "takeover-probe-ext.ts");
const LIFECYCLE_PROBE = join(FIXTURES, "probe-ext.ts");
const hosts: Host[] = [];
const fakes: FakeModel[] = [];

afterEach(async () => {
	for (const h of hosts.splice(0)) {
		await h.stop();
		h.cleanup();
	}
	for (const f of fakes.splice(0)) f.stop();
});

async function boot(
	opts: { deny?: boolean; modelsExtra?: string; args?: string[]; files?: Record<string, string> } = {},
) {
	const fake = startFakeModel([], { text: "hello from the sink" });
	fakes.push(fake);
	const h = await Host.start({
		config: { host_llm: opts.deny ? "deny" : "allow" },
		models: modelsYml(fake.url) + (opts.modelsExtra ?? ""),
		args: ["-e", PROBE, ...(opts.args ?? [])],
		files: opts.files,
	});
	hosts.push(h);
	return { h, fake };
}

/** Sends one rpc prompt and returns the frames of its turn (up to agent_end, plus late responses). */
async function prompt(h: Host, message = "hello"): Promise<RpcFrame[]> {
	const id = crypto.randomUUID();
	const before = h.frames.length;
	h.send({ type: "prompt", id, message });
	await h.waitFrame(f => f.type === "agent_end" && h.frames.indexOf(f) >= before, 20_000);
	// Whatever the host still had to say about this prompt comes before its answer to a later command.
	await h.barrier();
	return h.frames.slice(before).filter(f => f.type !== "response" || f.id === id);
}

const assistantEnds = (frames: RpcFrame[]) =>
	frames
		.filter(f => f.type === "message_end")
		.map(f => f.message as { role: string; stopReason?: string; errorMessage?: string })
		.filter(m => m.role === "assistant");

function expectDeniedTurn(frames: RpcFrame[]): void {
	const ends = assistantEnds(frames);
	expect(ends.length).toBe(1);
	expect(ends[0]?.stopReason).toBe("error");
	expect(ends[0]?.errorMessage).toContain(DENY_MESSAGE);
	expect(frames.filter(f => f.type === "auto_retry_start")).toEqual([]);
	expect(frames.filter(f => f.type === "agent_start").length).toBe(1);
	// Accepted, and no later "already processing" refusal for the same id.
	expect(frames.filter(f => f.type === "response").map(f => f.success)).toEqual([true]);
}

async function hostLlm(
	h: Host,
	body?: unknown,
	sid?: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
	const res = await fetch(new URL("/host-llm", h.url), {
		method: body === undefined ? "GET" : "POST",
		headers: h.headers(sid ? { "mcp-session-id": sid } : {}),
		body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
	});
	return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/**
 * Runs `/takeover-probe` with a fresh nonce and returns its report; throws when no report carries the
 * nonce. `settled`: the probe first waits for the registry's start-up refresh (and what follows it).
 */
async function probe(h: Host, mode: "" | "settled" = ""): Promise<Record<string, unknown>> {
	const nonce = crypto.randomUUID();
	const prefix = `TAKEOVER_PROBE ${nonce} `;
	// Only whole lines: the report may arrive on stderr in pieces.
	const line = () =>
		h.stderr
			.split("\n")
			.slice(0, -1)
			.find(l => l.startsWith(prefix));
	// A settled probe first waits for the registry's start-up refresh, inside the command itself.
	const boundMs = mode ? 30_000 : 10_000;
	await h.command(`/takeover-probe ${nonce} ${mode}`, Math.max(20_000, boundMs));
	await waitFor(`the takeover probe's report ${nonce} on stderr`, () => line() !== undefined, {
		timeoutMs: boundMs,
		seen: () => h.stderr,
	});
	return JSON.parse(line()?.slice(prefix.length) ?? "");
}

const toggles = (h: Host) => auditRecords(h, r => r.tool === "host_llm");

const trips = (h: Host) => h.stderr.split("a2a-bridge takeover: refused a model request").length - 1;

async function a2aStatus(h: Host): Promise<string> {
	await h.command("/a2a");
	return h.notifications().findLast(m => m.startsWith("A2A bridge: http")) ?? "";
}

const DEFAULTS = {
	"retry.enabled": true,
	"retry.modelFallback": true,
	"compaction.enabled": true,
	"todo.reminders": true,
	"autolearn.enabled": false,
	"providers.cacheRetention": "auto",
};

describe("host_llm deny from the config", () => {
	test("prompts -> 0 requests at the sink, one error turn each, no retry, host not left busy; tools work", async () => {
		const { h, fake } = await boot({ deny: true });
		const state = await hostLlm(h);
		expect(state.json).toMatchObject({ enabled: false, degraded: false });
		expect(state.json.denied).toBeGreaterThanOrEqual(2);
		for (const message of ["hello", "hello again", "third"]) expectDeniedTurn(await prompt(h, message));
		expect(fake.requests.length).toBe(0);
		expect(trips(h)).toBe(0);
		const sid = await openSession(h);
		writeFileSync(join(h.cwd, "note.txt"), "read-me-while-denied\n");
		const bash = await callTool(h, sid, "bash", { command: "echo bash-while-denied" });
		expect(JSON.stringify(bash.body)).toContain("bash-while-denied");
		expect((bash.body.result as { isError?: boolean }).isError).toBeFalsy();
		const read = await callTool(h, sid, "read", { path: "note.txt" }, 2);
		expect(JSON.stringify(read.body)).toContain("read-me-while-denied");
		expect(fake.requests.length).toBe(0);
		expect(await a2aStatus(h)).toContain("host_llm=deny");
		expect(await a2aStatus(h)).not.toContain("tripwire only");
		const records = toggles(h);
		expect(records.length).toBe(1);
		expect(records[0]).toMatchObject({ phase: "done", sid: null, isError: false, args: '{"enabled":false}' });
		const p = await probe(h);
		expect(p).toMatchObject({ denyApi: true, mainApi: "a2a-deny-api", fetchIsOriginal: false });
		expect(p.anthropicApis).toEqual(["a2a-deny-api"]);
		expect((p.settings as Record<string, unknown>)["retry.enabled"]).toBe(false);
	}, 60_000);
});

describe("POST /host-llm", () => {
	test("deny then allow -> sink counts 1, 1, 2; every layer back as it was; one audit record per toggle", async () => {
		const { h, fake } = await boot();
		const before = await probe(h);
		expect(before).toMatchObject({ fetchIsOriginal: true, denyApi: false, mainApi: "anthropic-messages" });
		expect(before.settings).toEqual(DEFAULTS);
		await prompt(h);
		expect(fake.requests.length).toBe(1);
		const sid = await openSession(h);
		const off = await hostLlm(h, { enabled: false }, sid);
		expect(off.status).toBe(200);
		expect(off.json).toMatchObject({ enabled: false, degraded: false });
		expectDeniedTurn(await prompt(h));
		expect(fake.requests.length).toBe(1);
		const on = await hostLlm(h, { enabled: true }, sid);
		expect(on).toEqual({ status: 200, json: { enabled: true, denied: 0, degraded: false } });
		expect(await probe(h)).toEqual(before);
		const turn = await prompt(h);
		expect(assistantEnds(turn)[0]?.stopReason).not.toBe("error");
		expect(fake.requests.length).toBe(2);
		expect(h.stderr).not.toContain("not restored");
		expect(toggles(h).map(r => [r.sid, r.isError, r.args])).toEqual([
			[sid, false, '{"enabled":false}'],
			[sid, false, '{"enabled":true}'],
		]);
		expect(await a2aStatus(h)).toContain("host_llm=allow");
	}, 60_000);

	test("Main's row replaced while denied -> degraded, tripwire alone keeps the sink at 0", async () => {
		const { h, fake } = await boot({ deny: true });
		const id = crypto.randomUUID();
		h.send({ type: "set_model", id, provider: "placeholder", modelId: "placeholder/small" });
		expect((await h.waitFrame(f => f.type === "response" && f.id === id)).success).toBe(true);
		expect((await hostLlm(h)).json).toMatchObject({ enabled: false, degraded: true });
		expect(await a2aStatus(h)).toContain("host_llm=deny (tripwire only)");
		const frames = await prompt(h);
		expect(assistantEnds(frames)[0]?.errorMessage).toContain(DENY_MESSAGE);
		expect(frames.filter(f => f.type === "auto_retry_start")).toEqual([]);
		expect(fake.requests.length).toBe(0);
		expect(trips(h)).toBe(1);
		await hostLlm(h, { enabled: true });
		expect(h.stderr).toContain("Main's model row was replaced while denied");
		await prompt(h);
		expect(fake.requests.length).toBe(1);
	}, 60_000);

	test("rpc new_session while denied -> the new session is denied too; sink stays at 0", async () => {
		const { h, fake } = await boot({ deny: true });
		const id = crypto.randomUUID();
		h.send({ type: "new_session", id });
		expect((await h.waitFrame(f => f.type === "response" && f.id === id)).success).toBe(true);
		expectDeniedTurn(await prompt(h));
		expect((await hostLlm(h)).json).toMatchObject({ enabled: false, degraded: false });
		expect(fake.requests.length).toBe(0);
	}, 60_000);

	test("bad bodies -> 400 naming the field; state and audit untouched", async () => {
		const { h } = await boot();
		for (const body of ["{}", '{"enabled":"false"}', "[]", "null", "not json", '{"enabled":0}']) {
			const r = await hostLlm(h, body);
			expect(r.status).toBe(400);
			expect(r.json.code).toBe("invalid_body");
		}
		expect((await hostLlm(h, '{"enabled":1}')).json.error).toBe("field 'enabled' must be a boolean");
		expect((await hostLlm(h)).json).toEqual({ enabled: true, denied: 0, degraded: false });
		const unauth = await fetch(new URL("/host-llm", h.url), { method: "POST", body: '{"enabled":false}' });
		expect(unauth.status).toBe(401);
		expect((await hostLlm(h)).json.enabled).toBe(true);
	}, 60_000);
});

// Provider-level config overrides reach the host's built-in rows of that provider.
const OPENAI_TRANSPORT = "  openai:\n    baseUrl: http://127.0.0.1:1/v1\n    transport: pi-native\n";
const ANTHROPIC_TRANSPORT = "  anthropic:\n    baseUrl: https://gateway.invalid/v1\n    transport: pi-native\n";

describe("what the deny cannot cover", () => {
	test("a transport on an unclaimed provider -> refuses to arm, visibly, nothing half-armed", async () => {
		const { h } = await boot({ deny: true, modelsExtra: OPENAI_TRANSPORT });
		const notice = await h.waitFrame(
			f => f.type === "extension_ui_request" && String(f.message).includes("not armed"),
			20_000,
		);
		expect(String(notice.message)).toContain("provider 'openai'");
		expect(String(notice.message)).toContain("transport 'pi-native'");
		const r = await hostLlm(h, { enabled: false });
		expect(r.status).toBe(409);
		expect(r.json).toMatchObject({ enabled: true, denied: 0, degraded: false, code: "cannot_arm" });
		expect(String(r.json.error)).toContain("provider 'openai'");
		expect(h.stderr).toContain("a2a-bridge takeover: not armed");
		const p = await probe(h);
		expect(p).toMatchObject({ fetchIsOriginal: true, denyApi: false, mainApi: "anthropic-messages" });
		expect(p.anthropicApis).toEqual(["anthropic-messages"]);
		expect(p.settings).toEqual(DEFAULTS);
		expect(toggles(h).map(r => r.isError)).toEqual([true, true]);
		expect(await a2aStatus(h)).toContain("host_llm=allow");
	}, 60_000);

	test("a transport on a claimed provider -> armed; the claim outlasts the registry's start-up refresh; restored", async () => {
		const { h, fake } = await boot({ deny: true, modelsExtra: ANTHROPIC_TRANSPORT });
		const denied = await probe(h, "settled");
		expect((await hostLlm(h)).json).toMatchObject({ enabled: false, degraded: false });
		expect(denied.anthropicApis).toEqual(["a2a-deny-api"]);
		expect(denied.anthropicTransports).toEqual([]);
		expectDeniedTurn(await prompt(h));
		await hostLlm(h, { enabled: true });
		const back = await probe(h);
		expect(back.anthropicApis).toEqual(["anthropic-messages"]);
		expect(back.anthropicTransports).toEqual(["pi-native"]);
		expect(h.stderr).not.toContain("not restored");
		expect(h.stderr).not.toContain("only the tripwire covers");
		expect(fake.requests.length).toBe(0);
	}, 90_000);
});

describe("subagents", () => {
	test("a task subagent started while denied -> refused by the tripwire, 0 requests; the deny API survives", async () => {
		const { h, fake } = await boot({
			deny: true,
			args: ["-e", LIFECYCLE_PROBE],
			files: { ".omp/agent/config.yml": "task:\n  agentIdleTtlMs: 1000\n" },
		});
		const sid = await openSession(h);
		const spawned = await callTool(h, sid, "task", { context: "test", tasks: [{ task: "say hi" }] });
		// The subagent's first request is its last: the task reports the takeover's refusal.
		expect(JSON.stringify(spawned.body)).toContain(DENY_MESSAGE);
		await waitFor("the subagent's session_shutdown", () => h.stderr.includes("PROBE session_shutdown mode=print"), {
			timeoutMs: 30_000,
			seen: () => h.stderr,
		});
		expect(h.stderr).toContain("PROBE session_start mode=print");
		expect(trips(h)).toBeGreaterThanOrEqual(1);
		expect(fake.requests.length).toBe(0);
		// The spawn cleared the extension's own registrations; the deny API is not one of them.
		expectDeniedTurn(await prompt(h));
		expect((await hostLlm(h)).json).toMatchObject({ enabled: false, degraded: false });
		expect((await probe(h)).anthropicApis).toEqual(["a2a-deny-api"]);
		expect(fake.requests.length).toBe(0);
		process.stderr.write(`[takeover e2e] subagent tripwire refusals: ${trips(h)}\n`);
	}, 60_000);
});
