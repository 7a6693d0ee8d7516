/** The `/a2a` command in the host TUI (contract §10, §14): output goes to `ctx.ui.notify`, never stdout. */
import type { ExtensionCommandContext } from "@oh-my-pi/pi-coding-agent";
import type { AuditLog } from "../audit/log.ts";
import type { BridgeConfig } from "../config/config.ts";
import { addToken, revokeToken, rotateToken } from "../config/file.ts";
import { OWNER } from "../config/tokens.ts";
import type { BridgeServer } from "../core/server.ts";
import { errorText } from "../text/error-text.ts";
import {
	type BridgeStatus,
	mcpJson,
	NOT_RUNNING,
	statusText,
	TOKENS_USAGE,
	tokenPrefix,
	tokensText,
} from "./commands.ts";

/** What the command needs of the running endpoint. */
export interface CommandTarget {
	url: string;
	server: BridgeServer;
	configPath: string;
	config: BridgeConfig;
	audit: AuditLog;
	/** The approval picture, read from the live host at each call. */
	approvals(): string[];
	/** Whether the user's config asks for a random port at every start (`port: 0`). */
	randomPort: boolean;
	/** Other live bridges of the runtime record, read at each call. */
	others(): Array<{ url: string; pid: number; cwd: string }>;
}

type Notify = (text: string, level: "info" | "warning" | "error") => void;

/** The config as it is live (file field names: `token` holds a secret): file ops keep disk and memory in step. */
function liveConfig(r: CommandTarget): BridgeConfig {
	const named = r.server.tokenNames().filter(n => n !== OWNER);
	const tokens = named.map(name => ({ name, token: r.server.secretOf(name) ?? "" }));
	return { ...r.config, token: r.server.ownerSecret, tokens };
}

function perToken(r: CommandTarget): NonNullable<BridgeStatus["perToken"]> {
	const sessions = r.server.sessions.byToken();
	return r.server.tokenNames().map(name => {
		const live = sessions.get(name) ?? [];
		const clients = [...new Set(live.map(s => s.client).filter((c): c is string => c !== null))];
		return { name, prefix: tokenPrefix(r.server.secretOf(name) ?? ""), sessions: live.length, clients };
	});
}

function status(r: CommandTarget, takeover: string): string {
	const now = Date.now();
	return statusText({
		url: r.url,
		ownerSecret: r.server.ownerSecret,
		sessions: r.server.sessions.size,
		callsServed: r.server.callsServed,
		inFlight: [...r.server.inFlight.values()].map(c => ({
			tool: c.tool,
			ageMs: now - c.startedAt,
			tokenName: c.tokenName,
			client: c.client,
			...(c.cancelled
				? { note: "cancelled, still stopping" }
				: c.abandoned
					? { note: "abandoned by its caller" }
					: c.task !== undefined
						? { note: `task ${c.task.slice(0, 8)}…` }
						: {}),
		})),
		takeover,
		auditPath: r.audit.path,
		perToken: perToken(r),
		approvals: r.approvals(),
		others: r.others(),
		randomPort: r.randomPort,
	});
}

/** Runs a config file change first; only when it landed does the live state follow. */
function onDisk<T>(notify: Notify, what: string, change: () => T): T | undefined {
	try {
		return change();
	} catch (err) {
		notify(`A2A bridge: ${what}: ${errorText(err)}`, "error");
		return undefined;
	}
}

function tokenCommand(r: CommandTarget, words: string[], notify: Notify): void {
	const [verb, name, ...rest] = words;
	if (verb === undefined) {
		notify(r.server.ownerSecret, "info");
	} else if ((verb !== "add" && verb !== "revoke") || name === undefined || rest.length > 0) {
		notify(`A2A bridge: ${TOKENS_USAGE}`, "error");
	} else if (verb === "add") {
		const secret = onDisk(notify, "token not added", () => addToken(r.configPath, liveConfig(r), name));
		if (secret === undefined) return;
		r.server.setToken(name, secret);
		notify(
			`A2A bridge: token '${name}' is live (full reach of this host, like every token). Shown once:\n${secret}\n` +
				`Its mcpServers entry: /a2a mcp-json ${name}`,
			"info",
		);
	} else {
		const done = onDisk(notify, "token not revoked", () => {
			revokeToken(r.configPath, liveConfig(r), name);
			return true;
		});
		if (!done) return;
		r.server.revokeToken(name);
		notify(
			`A2A bridge: token '${name}' revoked; its sessions and calls in flight ended, other tokens untouched`,
			"info",
		);
	}
}

export async function a2aCommand(
	r: CommandTarget | null | undefined,
	takeoverLabel: () => string,
	args: string,
	ctx: ExtensionCommandContext,
): Promise<void> {
	const notify: Notify = (text, level) => ctx.ui.notify(text, level);
	if (!r) return notify(NOT_RUNNING, "warning");
	const words = args.trim().split(/\s+/).filter(Boolean);
	const [sub, arg, ...extra] = words;
	if (sub === undefined) return notify(status(r, takeoverLabel()), "info");
	if (sub === "token") return tokenCommand(r, words.slice(1), notify);
	if (sub === "tokens" && arg === undefined) return notify(tokensText(perToken(r)), "info");
	const name = arg ?? OWNER;
	if (extra.length > 0 || (sub !== "rotate" && sub !== "mcp-json")) {
		return notify(`A2A bridge: unknown subcommand '${args.trim()}' (${TOKENS_USAGE})`, "error");
	}
	if (r.server.secretOf(name) === undefined) return notify(`A2A bridge: no live token named '${name}'`, "error");
	if (sub === "mcp-json") {
		const secret = r.server.secretOf(name) ?? "";
		return notify(mcpJson(r.url, secret, name === OWNER ? "omp-host" : `omp-host-${name}`, r.randomPort), "info");
	}
	const secret = onDisk(notify, "token not rotated", () => rotateToken(r.configPath, liveConfig(r), name));
	if (secret === undefined) return;
	r.server.setToken(name, secret);
	const who = name === OWNER ? "new token" : `new secret for '${name}'`;
	notify(`A2A bridge: ${who} ${tokenPrefix(secret)} is live; the old one and its sessions are refused`, "info");
}
