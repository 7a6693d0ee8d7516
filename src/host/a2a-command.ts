/** The `/a2a` command in the host TUI (contract §10): output goes to `ctx.ui.notify`, never stdout. */
import type { ExtensionCommandContext } from "@oh-my-pi/pi-coding-agent";
import type { AuditLog } from "../audit/log.ts";
import type { BridgeConfig } from "../config/config.ts";
import { rotateToken } from "../config/file.ts";
import type { BridgeServer } from "../core/server.ts";
import { mcpJson, NOT_RUNNING, statusText } from "./commands.ts";

/** What the command needs of the running endpoint. */
export interface CommandTarget {
	url: string;
	server: BridgeServer;
	configPath: string;
	config: BridgeConfig;
	audit: AuditLog;
}

export async function a2aCommand(
	r: CommandTarget | null | undefined,
	takeoverLabel: () => string,
	args: string,
	ctx: ExtensionCommandContext,
): Promise<void> {
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
			takeover: takeoverLabel(),
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
