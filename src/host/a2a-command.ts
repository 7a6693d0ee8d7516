/** The `/a2a` command in the host TUI (contract §10, §14): output goes to `ctx.ui.notify`, never stdout. */
import type { ExtensionCommandContext } from "@oh-my-pi/pi-coding-agent";
import type { AuditLog } from "../audit/log.ts";
import type { BridgeConfig } from "../config/config.ts";
import { generateToken } from "../config/config.ts";
import { addToken, revokeToken, rotateToken } from "../config/file.ts";
import { OWNER } from "../config/tokens.ts";
import type { BridgeServer } from "../core/server.ts";
import { errorText } from "../text/error-text.ts";
import { showSafely } from "../text/show.ts";
import {
	type BridgeStatus,
	mcpJson,
	NOT_RUNNING,
	statusText,
	TOKENS_USAGE,
	tokenPrefix,
	tokensText,
} from "./commands.ts";
import { type FactCheck, factStatus } from "./facts.ts";
import type { Notify } from "./notify.ts";
import { processPromptQueue } from "./prompt-queue.ts";

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
	/** The key of the printed `mcpServers` entries (`entryName`). */
	entryName: string;
	/** Other live bridges of the runtime record, read at each call. */
	others(): Array<{ url: string; pid: number; cwd: string }>;
	/**
	 * Secrets revoked or rotated away live whose removal from the file failed: a re-read file that still
	 * holds one does not bring it back (config-live.ts). Dropped once the file no longer holds it.
	 */
	unsaved: Set<string>;
	/** The host facts for the Main there is now (facts.ts): `/a2a` says whether they hold. */
	facts: () => readonly FactCheck[];
}

/**
 * The config as it is live (file field names: `token` holds a secret): file ops keep disk and memory in step,
 * and a live config edit reads back through it. @internal
 */
export function liveConfig(r: CommandTarget): BridgeConfig {
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
		hostFacts: factStatus(r.facts()),
	});
}

/** Runs a config file change; a failure is said and answered undefined. Lock notes are said as warnings. */
function onDisk<T>(notify: Notify, what: string, change: (warnings: string[]) => T): T | undefined {
	const warnings: string[] = [];
	try {
		return change(warnings);
	} catch (err) {
		notify(`A2A bridge: ${what}: ${errorText(err)}`, "error");
		return undefined;
	} finally {
		for (const w of warnings) notify(`A2A bridge: ${w}`, "warning");
	}
}

/**
 * Revoke and rotate act on the running host first (contract §19): the old secret is refused before the
 * file is touched, so a file that cannot be written (a full disk, a lock path someone planted) never leaves
 * it working. Then the file; the answer says whether it holds the change.
 */
function liveFirst(
	r: CommandTarget,
	notify: Notify,
	done: string,
	oldSecret: string,
	write: (w: string[]) => void,
): void {
	const saved = onDisk(notify, "the file was not changed", w => {
		write(w);
		return true;
	});
	if (saved) {
		notify(`A2A bridge: ${done}; ${r.configPath} holds the change`, "info");
		return;
	}
	r.unsaved.add(oldSecret);
	notify(
		`A2A bridge: ${done} in this host only: ${r.configPath} still holds the old secret, which the next start ` +
			"would take again; fix the file's problem and repeat the command, or edit the file by hand",
		"warning",
	);
}

function tokenCommand(r: CommandTarget, words: string[], notify: Notify): void {
	const [verb, name, ...rest] = words;
	if (verb === undefined) {
		notify(r.server.ownerSecret, "info");
	} else if ((verb !== "add" && verb !== "revoke") || name === undefined || rest.length > 0) {
		notify(`A2A bridge: ${TOKENS_USAGE}`, "error");
	} else if (verb === "add") {
		const secret = onDisk(notify, "token not added", w => addToken(r.configPath, liveConfig(r), name, { warnings: w }));
		if (secret === undefined) return;
		r.server.setToken(name, secret);
		notify(
			`A2A bridge: token '${name}' is live (full reach of this host, like every token). Shown once:\n${secret}\n` +
				`Its mcpServers entry: /a2a mcp-json ${name}`,
			"info",
		);
	} else {
		const before = liveConfig(r);
		const secret = r.server.secretOf(name);
		if (name === OWNER || secret === undefined) {
			// Nothing live to revoke: the file alone decides (a name only on disk, or a refusal naming why).
			const done = onDisk(notify, "token not revoked", w => revokeToken(r.configPath, before, name, { warnings: w }));
			if (done !== undefined) notify(`A2A bridge: token '${name}' removed from ${r.configPath}`, "info");
			return;
		}
		r.server.revokeToken(name);
		const done = `token '${name}' revoked; its sessions and calls in flight ended, other tokens untouched`;
		liveFirst(r, notify, done, secret, w => revokeToken(r.configPath, before, name, { warnings: w }));
	}
}

/** The person at the host denies one token's prompts at once (contract §19); a name with none is said so. */
function denyQueue(name: string, notify: Notify): void {
	const queue = processPromptQueue();
	const n = queue.denyToken(name);
	const who = showSafely(name, 80);
	const left = queue.snapshot().waiting.map(([t, k]) => `${showSafely(t, 80)} ${k}`);
	const others = left.length > 0 ? `; still waiting: ${left.join(", ")}` : "";
	notify(
		n > 0
			? `A2A bridge: denied ${n} approval prompt(s) of token '${who}' (shown and waiting)${others}`
			: `A2A bridge: token '${who}' has no approval prompt shown or waiting${others}`,
		"info",
	);
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
	if (sub === "deny-queue" && arg !== undefined && extra.length === 0) return denyQueue(arg, notify);
	const name = arg ?? OWNER;
	if (extra.length > 0 || (sub !== "rotate" && sub !== "mcp-json")) {
		return notify(`A2A bridge: unknown subcommand '${args.trim()}' (${TOKENS_USAGE})`, "error");
	}
	if (r.server.secretOf(name) === undefined) return notify(`A2A bridge: no live token named '${name}'`, "error");
	if (sub === "mcp-json") {
		const secret = r.server.secretOf(name) ?? "";
		return notify(mcpJson(r.url, secret, r.entryName, r.randomPort), "info");
	}
	const before = liveConfig(r);
	const old = r.server.secretOf(name) ?? "";
	const secret = generateToken();
	r.server.setToken(name, secret);
	const who = name === OWNER ? "new token" : `new secret for '${name}'`;
	const done = `${who} ${tokenPrefix(secret)} is live; the old one and its sessions are refused`;
	liveFirst(r, notify, done, old, w => rotateToken(r.configPath, before, name, { secret, warnings: w }));
}
