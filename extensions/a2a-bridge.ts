/**
 * pi-a2a-ext entry: serves an MCP endpoint from inside the running omp host.
 * This file and `src/host/` are the only places that touch the host. The endpoint belongs to
 * the process, not to a binding: subagents re-run this factory, so state lives on `globalThis`.
 */

import { homedir } from "node:os";
import {
	createAssistantMessageEventStream,
	registerCustomApi,
	toolWireSchema,
	unregisterCustomApis,
} from "@oh-my-pi/pi-ai";
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@oh-my-pi/pi-coding-agent";
import { AgentRegistry } from "@oh-my-pi/pi-coding-agent";
import pkg from "../package.json" with { type: "json" };
import { type AuditLog, createAuditLog, defaultAuditPath } from "../src/audit/log.ts";
import { createBlobRoute } from "../src/blob/route.ts";
import { type BridgeConfig, defaultConfigPath, isLoopbackHost } from "../src/config/config.ts";
import { loadConfig, rotateToken } from "../src/config/file.ts";
import { type Binding, bindBun, Endpoint } from "../src/core/listen.ts";
import { BridgeServer, type ExtraRoute } from "../src/core/server.ts";
import { type HostAccess, HostBridge, type HostSession } from "../src/host/bridge.ts";
import { announcement, mcpJson, NOT_RUNNING, statusText } from "../src/host/commands.ts";
import {
	CLAIM_API_KEY,
	DENY_API,
	DENY_MESSAGE,
	type HostSettings,
	type ModelRow,
	type TakeoverHost,
} from "../src/takeover/plan.ts";
import { createHostLlmRoute } from "../src/takeover/route.ts";
import { Takeover } from "../src/takeover/takeover.ts";

interface Running {
	binding: Binding;
	server: BridgeServer;
	url: string;
	configPath: string;
	config: BridgeConfig;
	audit: AuditLog;
}

interface ProcessState {
	endpoint: Endpoint<Running>;
	/** Created on first use; outlives endpoint restarts, since the layers it arms belong to the process. */
	takeover?: Takeover;
}

const STATE_KEY = Symbol.for("pi-a2a-ext.process-state");
const state: ProcessState = ((globalThis as Record<symbol, unknown>)[STATE_KEY] as ProcessState | undefined) ?? {
	endpoint: new Endpoint<Running>(),
};
(globalThis as Record<symbol, unknown>)[STATE_KEY] = state;

const logLine = (line: string): void => {
	// stdout is the host's rpc channel: diagnostics go to stderr only.
	process.stderr.write(`${line}\n`);
};

function liveMain(): (HostSession & { sessionManager?: { getSessionId(): string } }) | null {
	const ref = AgentRegistry.global().get("Main");
	return (ref?.session as unknown as (HostSession & { sessionManager?: { getSessionId(): string } }) | null) ?? null;
}

function isMainBinding(ctx: ExtensionContext): boolean {
	const main = liveMain();
	if (!main?.sessionManager) return false;
	try {
		return main.sessionManager.getSessionId() === ctx.sessionManager.getSessionId();
	} catch {
		return false;
	}
}

function hostAccess(pi: ExtensionAPI): HostAccess {
	return {
		mainSession: liveMain,
		fallbackTools: () => {
			try {
				return pi.getAllTools();
			} catch {
				return [];
			}
		},
		wireSchema: tool => toolWireSchema(tool as Parameters<typeof toolWireSchema>[0]),
		log: logLine,
	};
}

/** The takeover's own custom-API source: not the extension path, so a subagent spawn leaves it alone. */
const TAKEOVER_SOURCE = "a2a-bridge:takeover";

interface TakeoverMain {
	model?: ModelRow;
	agent: { setModel(row: unknown): void };
	settings: HostSettings;
	modelRegistry: {
		getAll(): ModelRow[];
		registerProvider(name: string, config: Record<string, unknown>): void;
		unregisterProvider(name: string): void;
		awaitInitialBackgroundRefresh(): Promise<void>;
		authStorage: { hasAuth(provider: string): boolean };
	};
}

function denyStream() {
	const stream = createAssistantMessageEventStream();
	queueMicrotask(() => stream.fail(new Error(DENY_MESSAGE)));
	return stream;
}

function takeoverHost(): TakeoverHost {
	const main = () => liveMain() as unknown as TakeoverMain | null;
	// Main and its subagents share one registry; the last one seen serves while Main is parked.
	let seen: TakeoverMain["modelRegistry"] | undefined;
	const registry = (): TakeoverMain["modelRegistry"] => {
		seen = main()?.modelRegistry ?? seen;
		if (!seen) throw new Error("no model registry yet: no Main session has started");
		return seen;
	};
	return {
		models: () => registry().getAll(),
		hasAuth: provider => registry().authStorage.hasAuth(provider),
		settled: () => registry().awaitInitialBackgroundRefresh(),
		registerDenyApi: () => registerCustomApi(DENY_API, denyStream, TAKEOVER_SOURCE),
		unregisterDenyApi: () => unregisterCustomApis(TAKEOVER_SOURCE),
		claimProvider: (provider, rows) =>
			registry().registerProvider(provider, {
				baseUrl: rows[0]?.baseUrl,
				apiKey: CLAIM_API_KEY,
				api: DENY_API,
				models: rows,
			}),
		releaseProvider: provider => registry().unregisterProvider(provider),
		mainModel: () => main()?.model ?? null,
		setMainModel: row => main()?.agent.setModel(row),
		mainSettings: () => main()?.settings ?? null,
		getFetch: () => globalThis.fetch,
		setFetch: f => {
			globalThis.fetch = f;
		},
		log: logLine,
	};
}

function processTakeover(): Takeover {
	state.takeover ??= new Takeover(takeoverHost(), record => state.endpoint.running?.audit.write(record));
	return state.takeover;
}

const positive = (v: string | undefined): number | undefined => (Number(v) > 0 ? Number(v) : undefined);

/** The host gives session_shutdown 2 s: calls still running after this are cancelled so each gets its answer and done record. */
const RELEASE_GRACE_MS = 1500;

async function open(pi: ExtensionAPI, ctx: ExtensionContext): Promise<Running> {
	const configPath = defaultConfigPath();
	const loaded = loadConfig(configPath);
	for (const w of loaded.warnings) ctx.ui.notify(`A2A bridge: ${w}`, "warning");
	const { config } = loaded;
	let server: BridgeServer | undefined;
	const audit = createAuditLog({ path: defaultAuditPath(), log: logLine, token: () => server?.token ?? config.token });
	const bridge = new HostBridge(hostAccess(pi));
	// Extra authenticated routes (contract §3); each feature module plugs in one entry here.
	const routes: Record<string, ExtraRoute> = {};
	routes["/host-llm"] = createHostLlmRoute(processTakeover());
	routes["/blob"] = createBlobRoute({
		home: homedir,
		cwd: () => AgentRegistry.global().get("Main")?.session?.sessionManager.getCwd() ?? process.cwd(),
		audit: record => audit.write(record),
		log: logLine,
	});
	server = new BridgeServer(
		{
			version: pkg.version,
			instructions: `Tools of the omp host in ${ctx.cwd}, run in its Main session through the host's own approval gate.`,
			listTools: () => bridge.listTools(),
			callTool: req => bridge.callTool(req),
			audit: audit.calls,
			log: logLine,
		},
		{
			token: config.token,
			bindHost: config.host,
			isLoopbackBind: isLoopbackHost(config.host),
			allowedOrigins: config.allowed_origins,
			routes,
			// Testing knob: lets the end-to-end suite observe idle expiry without waiting 24 h.
			sessionTtlMs: positive(process.env.A2A_BRIDGE_SESSION_TTL_MS),
		},
	);
	const bound = bindBun(server.handle, config.host, config.port);
	if (bound.fallbackFrom !== undefined) {
		ctx.ui.notify(
			`A2A bridge: port ${bound.fallbackFrom} is busy; listening on port ${bound.binding.port} instead`,
			"warning",
		);
	}
	const hostPart = config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host;
	const url = `http://${hostPart}:${bound.binding.port}/`;
	const live = server;
	const binding: Binding = {
		port: bound.binding.port,
		stop: async () => {
			const graceful = bound.binding.stop();
			const drained = await Promise.race([graceful.then(() => true), Bun.sleep(RELEASE_GRACE_MS).then(() => false)]);
			if (!drained) {
				live.cancelAll();
				await graceful;
			}
			await audit.flush();
		},
	};
	return { binding, server, url, configPath, config, audit };
}

async function startForMain(pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
	if (!isMainBinding(ctx)) return;
	const already = state.endpoint.running;
	try {
		const r = await state.endpoint.start(() => open(pi, ctx));
		if (r && r !== already) ctx.ui.notify(announcement(r.url, r.server.token), "info");
	} catch (err) {
		const msg = `A2A bridge not started: ${err instanceof Error ? err.message : String(err)}`;
		logLine(msg);
		ctx.ui.notify(msg, "error");
	}
}

/** Contract §8: the config's deny, or a deny in force, is armed again for every new Main session. */
function armForMain(ctx: ExtensionContext): void {
	const r = state.endpoint.running;
	if (!r || !isMainBinding(ctx)) return;
	const takeover = processTakeover();
	if (r.config.host_llm !== "deny" && !takeover.isDenied) return;
	const armed = takeover.toggle(false, null);
	if (!armed.ok) ctx.ui.notify(`A2A bridge: host_llm "deny" not armed: ${armed.message}`, "error");
}

async function a2aCommand(args: string, ctx: ExtensionCommandContext): Promise<void> {
	const r = state.endpoint.running;
	if (!r) {
		ctx.ui.notify(NOT_RUNNING, "warning");
		return;
	}
	const sub = args.trim();
	if (sub === "") {
		const now = Date.now();
		const text = statusText({
			url: r.url,
			token: r.server.token,
			sessions: r.server.sessions.size,
			callsServed: r.server.callsServed,
			inFlight: [...r.server.inFlight.values()].map(c => ({ tool: c.tool, ageMs: now - c.startedAt })),
			takeover: processTakeover().label(),
			auditPath: r.audit.path,
		});
		ctx.ui.notify(text, "info");
	} else if (sub === "rotate") {
		let token: string;
		try {
			token = rotateToken(r.configPath, { ...r.config, token: r.server.token });
		} catch (err) {
			ctx.ui.notify(`A2A bridge: token not rotated: ${err instanceof Error ? err.message : String(err)}`, "error");
			return;
		}
		r.server.setToken(token);
		ctx.ui.notify(`A2A bridge: new token ${token.slice(0, 6)}… is live; old token and its sessions refused`, "info");
	} else if (sub === "token") {
		ctx.ui.notify(r.server.token, "info");
	} else if (sub === "mcp-json") {
		ctx.ui.notify(mcpJson(r.url, r.server.token), "info");
	} else {
		ctx.ui.notify(
			`A2A bridge: unknown subcommand '${sub}' (use /a2a, /a2a rotate, /a2a token, /a2a mcp-json)`,
			"error",
		);
	}
}

export default function a2aBridge(pi: ExtensionAPI): void {
	pi.on("session_start", async (_event, ctx) => {
		await startForMain(pi, ctx);
		armForMain(ctx);
	});
	pi.on("session_shutdown", async (_event, ctx) => {
		// A subagent's shutdown must never take the process endpoint down.
		if (isMainBinding(ctx) || liveMain() === null) await state.endpoint.stop();
	});
	pi.registerCommand("a2a", {
		description: "A2A bridge: status, rotate, token, mcp-json",
		handler: a2aCommand,
	});
}
