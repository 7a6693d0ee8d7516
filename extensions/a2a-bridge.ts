/**
 * pi-a2a-ext entry: serves an MCP endpoint from inside the running omp host.
 * This file and `src/host/` are the only places that touch the host. The endpoint belongs to
 * the process, not to a binding: subagents re-run this factory, so state lives on `globalThis`.
 */

import { homedir, hostname } from "node:os";
import type { ExtensionAPI, ExtensionContext } from "@oh-my-pi/pi-coding-agent";
import pkg from "../package.json" with { type: "json" };
import { auditOwnFiles } from "../src/audit/file.ts";
import { type AuditLog, createAuditLog, defaultAuditPath } from "../src/audit/log.ts";
import { CrossLocks } from "../src/blob/flock.ts";
import { createBlobRoute } from "../src/blob/route.ts";
import { BLOB_STALL_MS } from "../src/blob/stall.ts";
import { type BridgeConfig, defaultConfigPath } from "../src/config/config.ts";
import { loadConfig } from "../src/config/file.ts";
import { isLoopbackHost, urlHost } from "../src/config/hosts.ts";
import { type Knobs, readKnobs } from "../src/config/knobs.ts";
import { canonicalPath, configName, ownFiles } from "../src/config/paths.ts";
import { otherLiveBridges } from "../src/config/runtime.ts";
import { IDLE_TIMEOUT_S } from "../src/core/idle.ts";
import { type Binding, bindBun, Endpoint, stopWithin } from "../src/core/listen.ts";
import { PROGRESS_MIN_INTERVAL_MS } from "../src/core/progress.ts";
import { BridgeServer, type ExtraRoute } from "../src/core/server.ts";
import { SESSION_TTL_MS } from "../src/core/sessions.ts";
import { TASK_WINDOW_MS } from "../src/core/task-wire.ts";
import type { SlotBound } from "../src/core/types.ts";
import { a2aCommand, type CommandTarget } from "../src/host/a2a-command.ts";
import { liveApprovals } from "../src/host/approvals-live.ts";
import { machineIdFile, readBoxTag } from "../src/host/box-tag.ts";
import { HostBridge } from "../src/host/bridge.ts";
import { entryName, startNotice } from "../src/host/commands.ts";
import { type Followed, followConfig, pinFirstPort } from "../src/host/config-live.ts";
import { refusalFor } from "../src/host/facts.ts";
import { instructionsFor } from "../src/host/instructions.ts";
import * as main from "../src/host/main.ts";
import { notifier } from "../src/host/notify.ts";
import { startPromptQueue } from "../src/host/prompt-queue.ts";
import { RemoteCalls } from "../src/host/remote-calls.ts";
import { takeoverHost } from "../src/host/takeover-host.ts";
import { createHostLlmRoute } from "../src/takeover/route.ts";
import { Takeover } from "../src/takeover/takeover.ts";
import { errorText } from "../src/text/error-text.ts";

/** A running endpoint: what `/a2a` and live config edits act on, and the binding that stops it. */
interface Running extends CommandTarget {
	binding: Binding;
}

interface ProcessState {
	endpoint: Endpoint<Running>;
	/** Created on first use; outlives endpoint restarts, since the layers it arms belong to the process. */
	takeover?: Takeover;
	/** Remote calls by tool call id, for the approval-prompt label (one listener per process). */
	remote: RemoteCalls;
	/** The process's audit log: the takeover's records land in it whether or not an endpoint runs. */
	audit?: AuditLog;
	/** The server of the endpoint opened last, set before it binds: the audit scrubs its live secrets. */
	server?: BridgeServer;
	/** The audit log's path, absolute and canonical from the first use on (contract §19). */
	auditPath?: string;
}

const STATE_KEY = Symbol.for("pi-a2a-ext.process-state");
const state: ProcessState = ((globalThis as Record<symbol, unknown>)[STATE_KEY] as ProcessState | undefined) ?? {
	endpoint: new Endpoint<Running>(),
	remote: new RemoteCalls(),
};
(globalThis as Record<symbol, unknown>)[STATE_KEY] = state;

function processAudit(): AuditLog {
	if (state.audit) return state.audit;
	// Relative names are the process's working directory's, as the kernel would take them; fixed here once.
	state.auditPath ??= canonicalPath(defaultAuditPath(process.env), process.cwd());
	// Rotation is locked against other bridges on the same path with the flock(2) uploads use.
	const flock = new CrossLocks();
	const unlocked = () => main.logLine("a2a-bridge: audit rotation is locked within this process only (no flock(2))");
	state.audit = createAuditLog({
		path: state.auditPath,
		log: main.logLine,
		secrets: () => state.server?.secrets ?? [],
		lock: fd => flock.tryTake(fd, unlocked),
	});
	return state.audit;
}

function processTakeover(): Takeover {
	const audit = processAudit();
	state.takeover ??= new Takeover(takeoverHost(), record => audit.write(record));
	return state.takeover;
}

/** The bounds the testing knobs may shorten (docs/testing.md); read here only, handed in as numbers. */
const KNOB_BOUNDS = {
	sessionTtlMs: SESSION_TTL_MS,
	idleTimeoutS: IDLE_TIMEOUT_S,
	blobStallMs: BLOB_STALL_MS,
	progressIntervalMs: PROGRESS_MIN_INTERVAL_MS,
	taskWindowMs: TASK_WINDOW_MS,
};

/** The host gives session_shutdown 2 s: calls still running after this are cancelled so each gets its answer and done record. */
const RELEASE_GRACE_MS = 1500;

async function open(pi: ExtensionAPI, ctx: ExtensionContext): Promise<Running> {
	const name = configName(defaultConfigPath(process.env), process.cwd());
	// The file the name reaches is the config: its lock, its runtime record and every write (contract §19).
	const configPath = name.file;
	const knobs = readKnobs(process.env, KNOB_BOUNDS);
	const loaded = loadConfig(configPath);
	for (const w of loaded.warnings) ctx.ui.notify(`A2A bridge: ${w}`, "warning");
	const prompts = startPromptQueue(process.env, w => ctx.ui.notify(`A2A bridge: ${w}`, "warning"));
	const { config } = loaded;
	await main.factsAtStart(); // each host fact probed before any is served, again when Main changes (architecture.md)
	const audit = processAudit();
	let live: CommandTarget | undefined;
	let followed: Followed | undefined; // every file the config has been at stays an own path
	const own = () => ownFiles(name, followed?.files() ?? [configPath], auditOwnFiles(audit.path));
	const server = serverFor(pi, config, extraRoutes(own, config, audit, knobs), audit, { ...knobs, prompts });
	state.server = server;
	const notify = notifier(ctx, main.logLine);
	const bound = bindBun(server.handle, config.host, config.port, knobs.idleTimeoutS);
	const port = bound.binding.port;
	const busy = bound.fallbackFrom;
	if (busy !== undefined) notify(`A2A bridge: port ${busy} is busy; listening on port ${port} instead`, "warning");
	const url = `http://${urlHost(config.host)}:${port}/`;
	// Contract §18: the first start's port is written back, so pasted entries survive a restart.
	if (!loaded.portFromFile && pinFirstPort(configPath, port, notify)) config.port = port;
	live = {
		server,
		url,
		configPath,
		config,
		audit,
		approvals: () => liveApprovals(config.blob),
		randomPort: loaded.portFromFile && config.port === 0,
		// The pinned port names the host even when this start fell back to another (contract §20).
		entryName: entryName(config.name, hostname(), config.port || port, readBoxTag(machineIdFile(process.env))),
		others: () => otherLiveBridges(live?.configPath ?? configPath),
		unsaved: new Set(),
		facts: main.liveFacts,
	};
	// Edits by another process (`npm run token`, an editor) apply live where they can (contract §18).
	followed = followConfig(name, live, { url, port, cwd: main.mainCwd() }, notify, main.logLine);
	const stop = async (): Promise<void> => {
		followed?.stop();
		server.cancelTasks();
		await stopWithin(bound.binding, RELEASE_GRACE_MS, () => server.cancelAll());
		await audit.close();
	};
	// The same object the watch updates: `/a2a` writes where the config is now.
	return Object.assign(live, { binding: { port, stop } });
}

/** Extra authenticated routes (contract §3); each feature module plugs in one entry here. */
function extraRoutes(own: () => string[], config: BridgeConfig, audit: AuditLog, knobs: Knobs) {
	const routes: Record<string, ExtraRoute> = {};
	// The toggle's record, as takeover.ts writes it: the caller's budget must pay for it first (contract §19).
	const toggle = (tokenName: string, sid: string | null) =>
		audit.check({ id: crypto.randomUUID(), sid, tokenName, phase: "done", tool: "host_llm", isError: false, args: {} });
	routes["/host-llm"] = createHostLlmRoute(processTakeover(), toggle);
	routes["/blob"] = createBlobRoute({
		home: homedir,
		cwd: main.blobCwd,
		audit: record => audit.write(record),
		refused: record => audit.refused(record),
		admit: record => audit.admit(record, 1),
		log: main.logLine,
		config: () => config,
		stallMs: knobs.blobStallMs,
		ownFiles: own,
	});
	return routes;
}

/** The server over the host adapter, with the config's tokens and bind, the knobs' bounds and the prompt queue's. */
function serverFor(
	pi: ExtensionAPI,
	config: BridgeConfig,
	routes: Record<string, ExtraRoute>,
	audit: AuditLog,
	knobs: Knobs & { prompts: SlotBound },
): BridgeServer {
	const bridge = new HostBridge(main.hostAccess(pi));
	return new BridgeServer(
		{
			version: pkg.version,
			// Built at each handshake from what the host lists then (contract §20).
			instructions: () =>
				instructionsFor({ cwd: main.mainCwd(), tools: bridge.listTools().map(t => t.name), blob: config.blob }),
			listTools: () => bridge.listTools(),
			callTool: req => state.remote.track(req, () => bridge.callTool(req)),
			unavailable: method => refusalFor(main.liveFacts(), method),
			audit: audit.calls,
			log: main.logLine,
		},
		{
			ownerSecret: config.token,
			tokens: config.tokens,
			bindHost: config.host,
			isLoopbackBind: isLoopbackHost(config.host),
			allowedOrigins: config.allowed_origins,
			routes,
			sessionTtlMs: knobs.sessionTtlMs,
			sse: { minIntervalMs: knobs.progressIntervalMs },
			taskWindowMs: knobs.taskWindowMs,
			bounds: { prompts: knobs.prompts },
		},
	);
}

async function startForMain(pi: ExtensionAPI, ctx: ExtensionContext): Promise<void> {
	if (!main.isMainBinding(ctx)) return;
	const already = state.endpoint.running;
	try {
		const r = await state.endpoint.start(() => open(pi, ctx));
		if (r && r !== already)
			ctx.ui.notify(startNotice(r.url, r.server.ownerSecret, r.randomPort, r.approvals()), "info");
	} catch (err) {
		const msg = `A2A bridge not started: ${errorText(err)}`;
		main.logLine(msg);
		ctx.ui.notify(msg, "error");
	}
}

/** Contract §8: the config's deny, or a deny in force, is armed again for every new Main session. */
function armForMain(ctx: ExtensionContext): void {
	const r = state.endpoint.running;
	if (!r || !main.isMainBinding(ctx) || (r.config.host_llm !== "deny" && !processTakeover().isDenied)) return;
	const armed = processTakeover().toggle(false, null);
	if (!armed.ok) ctx.ui.notify(`A2A bridge: host_llm "deny" not armed: ${armed.why}`, "error");
}

export default function a2aBridge(pi: ExtensionAPI): void {
	// Each binding's runner emits its own approval events; the label is looked up by tool call id.
	state.remote.listen(pi);
	pi.on("session_start", async (_event, ctx) => {
		await startForMain(pi, ctx);
		armForMain(ctx);
	});
	pi.on("session_shutdown", async (_event, ctx) => {
		// A subagent's shutdown must never take the process endpoint down.
		if (main.isMainBinding(ctx) || main.liveMain() === null) await state.endpoint.stop();
	});
	pi.registerCommand("a2a", {
		description: "A2A bridge: status, tokens, token add|revoke NAME, rotate [NAME], mcp-json [NAME], deny-queue NAME",
		handler: (args, ctx) => a2aCommand(state.endpoint.running, () => processTakeover().label(), args, ctx),
	});
}
