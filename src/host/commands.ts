/**
 * Text of the `/a2a` commands (contract §10). Pure: the entry gathers the state and shows the text
 * through `ctx.ui.notify`, never stdout.
 */

import { MAX_SESSIONS } from "../core/sessions.ts";
import { showSafely } from "../text/show.ts";

export const NOT_RUNNING = "A2A bridge not running";
/** The host's MCP client times out after 30 s by default; remote builds and flashes run for hours. @internal */
export const MCP_JSON_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export interface BridgeStatus {
	url: string;
	/** The owner token's secret (only its prefix is shown). */
	ownerSecret: string;
	sessions: number;
	callsServed: number;
	/** `note`: why a call still runs though its caller is answered or gone (contract §15). */
	inFlight: Array<{ tool: string; ageMs: number; tokenName?: string; client?: string | null; note?: string }>;
	takeover: string;
	auditPath: string;
	/** Per token name: its live sessions' count and the clients they named (contract §14). */
	perToken?: Array<{ name: string; prefix: string; sessions: number; clients: string[] }>;
	/** The approval picture (`describeApprovals`), one line each. */
	approvals?: string[];
	/** Other live bridges of the runtime record (contract §18). */
	others?: ReadonlyArray<{ url: string; pid: number; cwd: string }>;
	randomPort?: boolean;
	/** Whether the host facts hold (`factStatus`), one line each. */
	hostFacts?: string[];
}

export const tokenPrefix = (secret: string): string => `${secret.slice(0, 6)}…`;

/** Said wherever the URL is printed when the user's config asks for a random port. */
const RANDOM_PORT_NOTE = 'port 0 in the config: a new port at every start (set "port" to keep this URL)';

/** @internal */
export function announcement(url: string, ownerSecret: string, randomPort = false): string {
	return `A2A bridge listening on ${url} (token ${tokenPrefix(ownerSecret)})${randomPort ? `; ${RANDOM_PORT_NOTE}` : ""}`;
}

/**
 * The one start notification: the TUI shows the latest notification, so the URL and the approval picture
 * travel together (two notifications would hide the first at once).
 */
export function startNotice(url: string, ownerSecret: string, randomPort: boolean, approvals: string[]): string {
	const picture = ["A2A bridge approval picture (what a remote call meets):", ...approvals];
	return [announcement(url, ownerSecret, randomPort), ...picture].join("\n");
}

/** `/a2a`'s line for other bridges on this config, from the runtime record (none: no line). */
function othersText(others: ReadonlyArray<{ url: string; pid: number; cwd: string }>): string[] {
	if (others.length === 0) return [];
	return [
		`other bridges of this user (${others.length}):`,
		...others.map(o => `  ${o.url} pid ${o.pid}, serving ${o.cwd}`),
	];
}

const callLabel = (c: BridgeStatus["inFlight"][number]): string => {
	const who = [
		c.tokenName ? `token ${showSafely(c.tokenName, 80)}` : "",
		c.client ? `client ${showSafely(c.client, 80)}` : "",
	]
		.filter(Boolean)
		.join(", ");
	return `${showSafely(c.tool, 120)} (${Math.round(c.ageMs / 1000)} s${c.note ? `, ${c.note}` : ""}${who ? `, ${who}` : ""})`;
};

export function statusText(s: BridgeStatus): string {
	const calls = s.inFlight.length === 0 ? "none" : s.inFlight.map(callLabel).join(", ");
	const perToken = (s.perToken ?? []).map(t => {
		const clients = t.clients.length > 0 ? ` (clients: ${t.clients.map(c => showSafely(c, 80)).join(", ")})` : "";
		return `  ${t.name} ${t.prefix}: ${t.sessions} session(s)${clients}`;
	});
	return [
		`A2A bridge: ${s.url}${s.randomPort ? ` (${RANDOM_PORT_NOTE})` : ""}`,
		`token: ${tokenPrefix(s.ownerSecret)}`,
		`sessions: ${s.sessions}/${MAX_SESSIONS}`,
		...(perToken.length > 0 ? ["sessions per token:", ...perToken] : []),
		`calls served: ${s.callsServed}`,
		`calls in flight: ${s.inFlight.length} ${calls === "none" ? "" : `— ${calls}`}`.trimEnd(),
		`host_llm=${s.takeover}`,
		...(s.hostFacts ?? []),
		...(s.approvals ?? []),
		`audit: ${s.auditPath}`,
		...othersText(s.others ?? []),
	].join("\n");
}

export const TOKENS_USAGE =
	"use /a2a, /a2a tokens, /a2a token, /a2a token add NAME, /a2a token revoke NAME, /a2a rotate [NAME], /a2a mcp-json [NAME], /a2a deny-queue NAME";

/** `/a2a tokens`: every live token's name, prefix and live sessions; never a full secret. */
export function tokensText(rows: NonNullable<BridgeStatus["perToken"]>): string {
	const lines = rows.map(t => `  ${t.name} ${t.prefix}: ${t.sessions} session(s)`);
	return [`A2A bridge tokens (${rows.length}; each has the host's full reach):`, ...lines].join("\n");
}

/**
 * The key of this host's printed `mcpServers` entries (contract §20): the config's `name`, else `omp-<host
 * name>-<box tag>-<port>` (`box-tag.ts`; without a tag `omp-<host name>-<port>`) with the port the config pins
 * (the bound one when it asks for a random port). Distinct per box, clones of one image included, and per port.
 */
export function entryName(configured: string | undefined, hostName: string, port: number, tag?: string): string {
	if (configured !== undefined) return configured;
	const host = hostName
		.toLowerCase()
		.replace(/[^a-z0-9-]+/g, "-")
		.replace(/-+/g, "-")
		.replace(/^-|-$/g, "");
	// 30 keeps the longest name at 47, within the 48 a configured `name` may have.
	const box = tag !== undefined && /^[0-9a-f]{6}$/.test(tag) ? `-${tag}` : "";
	return `omp-${host.slice(0, 30).replace(/-$/, "") || "host"}${box}-${port}`;
}

/**
 * A ready-to-paste `mcpServers` entry for `~/.omp/agent/mcp.json` (and clients with the same shape); with a
 * random port, a last line outside the JSON says the URL will not survive a restart.
 */
export function mcpJson(url: string, secret: string, name: string, randomPort = false): string {
	const entry = {
		mcpServers: {
			[name]: { type: "http", url, headers: { Authorization: `Bearer ${secret}` }, timeout: MCP_JSON_TIMEOUT_MS },
		},
	};
	return `${JSON.stringify(entry, null, 2)}${randomPort ? `\nNote: ${RANDOM_PORT_NOTE}` : ""}`;
}
