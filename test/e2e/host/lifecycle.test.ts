/**
 * Lifecycle against the real host: config creation and fail-closed refusal, port fallback, one
 * endpoint per process across a subagent, token rotation, /a2a commands, graceful release.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { modelsYml, startFakeModel } from "../../helpers/fake-model.ts";
import { callTool, canConnect, defaultEntryName, freePort, Host, openSession, rpcPost } from "../../helpers/host.ts";
import { StoppableWork } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const PROBE = join(import.meta.dir, "..", "..", "fixtures", "probe-ext.ts");
const hosts: Host[] = [];
const cleanups: Array<() => void> = [];

async function boot(opts: Parameters<typeof Host.start>[0] = {}): Promise<Host> {
	const h = await Host.start(opts);
	hosts.push(h);
	return h;
}

afterEach(async () => {
	for (const h of hosts.splice(0)) {
		await h.stop();
		h.cleanup();
	}
	for (const c of cleanups.splice(0)) c();
});

const announced = (h: Host): string | undefined => h.notifications().find(m => m.startsWith("A2A bridge listening on"));
const portOf = (msg: string): number => Number(/:(\d+)\//.exec(msg)?.[1]);

async function waitNotify(h: Host, pred: (m: string) => boolean, timeoutMs = 20_000): Promise<string> {
	const f = await h.waitFrame(
		fr => fr.type === "extension_ui_request" && fr.method === "notify" && pred(String(fr.message)),
		timeoutMs,
	);
	return String(f.message);
}

describe("config", () => {
	test("absent config -> created 0600, tab-indented, 43-char token, the bound port written back, announced with its prefix", async () => {
		const h = await boot({ config: null });
		// No port to wait for (it is chosen at start): the wait covers the whole boot, slow on a loaded machine.
		const msg = await waitNotify(h, m => m.startsWith("A2A bridge listening on"), 45_000);
		const text = readFileSync(h.configPath, "utf8");
		const cfg = JSON.parse(text);
		expect(statSync(h.configPath).mode & 0o777).toBe(0o600);
		expect(text).toContain('\n\t"token"');
		expect(cfg.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(cfg).toMatchObject({ port: portOf(msg), host: "127.0.0.1", host_llm: "allow" });
		expect(msg.split("\n")[0]).toBe(
			`A2A bridge listening on http://127.0.0.1:${portOf(msg)}/ (token ${cfg.token.slice(0, 6)}…)`,
		);
		expect(await canConnect(portOf(msg))).toBe(true);
	}, 60_000);

	test("A2A_BRIDGE_CONFIG points at another file", async () => {
		const port = await freePort();
		const token = "t".repeat(40);
		const h = await boot({
			config: null,
			files: { "elsewhere/bridge.json": JSON.stringify({ port, token, blob: "read" }) },
			env: { A2A_BRIDGE_CONFIG: "{HOME}/elsewhere/bridge.json" },
			waitForPort: false,
		});
		await h.waitForPort(port);
		const res = await fetch(`http://127.0.0.1:${port}/`, {
			method: "POST",
			headers: { authorization: `Bearer ${token}` },
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
		});
		expect(res.status).toBe(200);
		await res.text();
		expect(JSON.parse(readFileSync(join(h.home, "elsewhere", "bridge.json"), "utf8"))).toEqual({
			port,
			token,
			blob: "read",
		});
		expect(() => statSync(h.configPath)).toThrow();
	}, 60_000);

	for (const [name, bad, field] of [
		["port out of range", { port: 70000 }, "port"],
		["host_llm not allow/deny", { host_llm: "maybe" }, "host_llm"],
		["short token", { token: "short" }, "token"],
		["empty host", { host: "" }, "host"],
		["a misspelled key", { blobs: "read" }, "blobs"],
		["a key in the wrong case", { Blob: "off" }, "Blob"],
	] as const) {
		test(`${name} -> refused naming field '${field}'; host alive, port closed, file untouched`, async () => {
			const port = await freePort();
			const raw = JSON.stringify(Object.assign({ port, token: "k".repeat(40), host_llm: "deny" }, bad));
			const h = await boot({ config: raw, waitForPort: false });
			const msg = await waitNotify(h, m => m.startsWith("A2A bridge not started"));
			expect(msg).toContain(h.configPath);
			expect(msg).toContain(`field '${field}'`);
			if (field === "blobs" || field === "Blob")
				expect(msg).toContain(`unknown field '${field}' (did you mean 'blob'?)`);
			// stderr is read on its own stream: it may trail the rpc frame by a moment under load.
			await waitFor(`stderr to name field '${field}'`, () => h.stderr.includes(`field '${field}'`), {
				timeoutMs: 5000,
				seen: () => h.stderr,
			});
			expect(await canConnect(port)).toBe(false);
			expect(readFileSync(h.configPath, "utf8")).toBe(raw);
			await h.command("/a2a");
			expect(h.notifications()).toContain("A2A bridge not running");
			expect(h.proc.exitCode).toBeNull();
		}, 60_000);
	}

	test("absent token -> generated and written back; other fields survive", async () => {
		const port = await freePort();
		const h = await boot({ config: JSON.stringify({ port, allowed_origins: ["http://a.b"] }), waitForPort: false });
		await h.waitForPort(port);
		const cfg = JSON.parse(readFileSync(h.configPath, "utf8"));
		expect(cfg.allowed_origins).toEqual(["http://a.b"]);
		expect(cfg.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(statSync(h.configPath).mode & 0o777).toBe(0o600);
	}, 60_000);
});

describe("binding", () => {
	test("busy configured port -> one fallback, warning names both ports", async () => {
		const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("busy") });
		cleanups.push(() => blocker.stop(true));
		const busy = blocker.port ?? 0;
		const h = await boot({ config: { port: busy }, waitForPort: false });
		const warn = await waitNotify(h, m => m.includes("is busy"));
		const msg = await waitNotify(h, m => m.startsWith("A2A bridge listening on"));
		const actual = portOf(msg);
		expect(actual).not.toBe(busy);
		expect(warn).toBe(`A2A bridge: port ${busy} is busy; listening on port ${actual} instead`);
		const res = await fetch(`http://127.0.0.1:${actual}/`, {
			method: "POST",
			headers: { authorization: `Bearer ${h.token}` },
			body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
		});
		expect(res.status).toBe(200);
		await res.text();
	}, 60_000);

	test("a task subagent neither binds a second port nor takes the endpoint down", async () => {
		// The subagent's one turn yields at once, so its binding shuts down while the host runs on.
		const fake = startFakeModel([{ tool: "yield", input: { data: "hi" } }]);
		cleanups.push(() => fake.stop());
		// A short idle TTL parks the finished subagent, which shuts its binding down.
		const h = await boot({
			models: modelsYml(fake.url),
			args: ["-e", PROBE],
			files: { ".omp/agent/config.yml": "task:\n  agentIdleTtlMs: 1000\n" },
		});
		const sid = await openSession(h);
		const spawned = await callTool(h, sid, "task", { context: "test", tasks: [{ task: "say hi" }] });
		// A fast subagent may finish before the task tool returns; either way a child binding ran.
		expect(JSON.stringify(spawned.body)).toMatch(/Spawned agent|task-result/);
		await waitFor("the subagent's session_shutdown", () => h.stderr.includes("PROBE session_shutdown mode=print"), {
			timeoutMs: 30_000,
			seen: () => h.stderr,
		});
		expect(h.stderr).toContain("PROBE session_start mode=print");
		expect(h.stderr).toContain("PROBE session_shutdown mode=print");
		const listeners = Bun.spawnSync(["ss", "-ltnpH"])
			.stdout.toString()
			.split("\n")
			.filter(l => l.includes(`pid=${h.proc.pid},`));
		expect(listeners.length).toBe(1);
		expect(listeners[0]).toContain(`127.0.0.1:${h.port}`);
		const after = await callTool(h, sid, "bash", { command: "echo still-here" });
		expect(JSON.stringify(after.body)).toContain("still-here");
		expect(h.notifications().filter(m => m.startsWith("A2A bridge listening on")).length).toBe(1);
	}, 90_000);

	test("release is graceful: a call in flight at shutdown finishes, then the port is closed", async () => {
		const h = await boot();
		const sid = await openSession(h);
		// Shorter than the 1.5 s release grace even on a loaded machine.
		const pending = callTool(h, sid, "bash", { command: "sleep 0.4; echo graceful-done" });
		// Close stdin only once the call is in flight (its start record is on disk).
		const started = () => existsSync(h.auditPath) && readFileSync(h.auditPath, "utf8").includes("graceful-done");
		await waitFor("the call's start record", started, { timeoutMs: 10_000 });
		h.proc.stdin.end();
		const r = await pending;
		expect(r.status).toBe(200);
		expect(JSON.stringify(r.body)).toContain("graceful-done");
		await h.proc.exited;
		expect(await canConnect(h.port)).toBe(false);
	}, 60_000);

	test("the announcement and command output go through notify, never raw stdout", async () => {
		const h = await boot();
		await h.command("/a2a");
		expect(announced(h)).toBeDefined();
		expect(h.frames.filter(f => f.type === "non_json_stdout")).toEqual([]);
	}, 60_000);
});

describe("sessions over time", () => {
	test("idle past the TTL -> 404; a session seen within the TTL lives on", async () => {
		const h = await boot({ env: { A2A_BRIDGE_SESSION_TTL_MS: "1500" } });
		const idle = await openSession(h);
		const busy = await openSession(h);
		const ping = (s: string) => rpcPost(h, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": s });
		// Time passing is what is under test here (a 1.5 s TTL), so these pauses are the stimulus.
		for (let i = 0; i < 5; i++) {
			await Bun.sleep(500);
			expect((await ping(busy)).status).toBe(200);
		}
		const res = await ping(idle);
		expect(res.status).toBe(404);
		expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32001);
	}, 60_000);
});

describe("/a2a commands", () => {
	test("/a2a shows URL, token prefix, sessions, calls and audit path", async () => {
		const h = await boot();
		const sid = await openSession(h);
		await callTool(h, sid, "bash", { command: "true" });
		await h.command("/a2a");
		const text = h.notifications().find(m => m.startsWith("A2A bridge: http")) ?? "";
		expect(text).toContain(`A2A bridge: ${h.url}`);
		expect(text).toContain(`token: ${h.token.slice(0, 6)}…`);
		expect(text).toContain("sessions: 1/64");
		expect(text).toContain("calls served: 1");
		expect(text).toContain(`audit: ${h.auditPath}`);
		expect(text).not.toContain(h.token);
	}, 60_000);

	test("/a2a token and /a2a mcp-json", async () => {
		const h = await boot();
		await h.command("/a2a token");
		expect(h.notifications()).toContain(h.token);
		await h.command("/a2a mcp-json");
		const entry = JSON.parse(h.notifications().find(m => m.startsWith("{")) ?? "{}");
		const name = defaultEntryName(h.port);
		expect(Object.keys(entry.mcpServers)).toEqual([name]);
		expect(entry.mcpServers[name]).toMatchObject({
			type: "http",
			url: h.url,
			headers: { Authorization: `Bearer ${h.token}` },
		});
		expect(entry.mcpServers[name].timeout).toBeGreaterThan(30_000);
	}, 60_000);

	test("/a2a rotate: disk first, new token live, old token and its sessions refused at once, their calls killed", async () => {
		const h = await boot({ config: { blob: "read" } });
		const oldSid = await openSession(h);
		const work = new StoppableWork(h.cwd);
		cleanups.push(() => work.cleanup());
		const inFlight = callTool(h, oldSid, "bash", { command: work.command }, 7);
		await work.running();
		await h.command("/a2a rotate");
		await work.stopped();
		expect((await inFlight).body.error).toEqual({ code: -32800, message: "request cancelled" });
		const cfg = JSON.parse(readFileSync(h.configPath, "utf8"));
		expect(cfg.token).not.toBe(h.token);
		expect(cfg.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
		expect(cfg.blob).toBe("read");
		expect(statSync(h.configPath).mode & 0o777).toBe(0o600);
		const oldRes = await rpcPost(h, { jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": oldSid });
		expect(oldRes.status).toBe(401);
		expect(oldRes.headers.get("www-authenticate")).toContain('error="invalid_token"');
		const withNew = { authorization: `Bearer ${cfg.token}` };
		const stale = await rpcPost(h, { jsonrpc: "2.0", id: 1, method: "ping" }, { ...withNew, "mcp-session-id": oldSid });
		expect(stale.status).toBe(404);
		const init = await rpcPost(h, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} }, withNew);
		expect(init.status).toBe(200);
		await init.text();
	}, 60_000);
});
