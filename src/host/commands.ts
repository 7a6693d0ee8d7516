/**
 * Text of the `/a2a` commands (contract §10). Pure: the entry gathers the state and shows the text
 * through `ctx.ui.notify`, never stdout.
 */
import { MAX_SESSIONS } from "../core/sessions.ts";

export const NOT_RUNNING = "A2A bridge not running";
/** The host's MCP client times out after 30 s by default; remote builds and flashes run for hours. */
export const MCP_JSON_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export interface BridgeStatus {
	url: string;
	token: string;
	sessions: number;
	callsServed: number;
	inFlight: Array<{ tool: string; ageMs: number }>;
	takeover: string;
	auditPath: string;
}

export const tokenPrefix = (token: string): string => `${token.slice(0, 6)}…`;

export function announcement(url: string, token: string): string {
	return `A2A bridge listening on ${url} (token ${tokenPrefix(token)})`;
}

export function statusText(s: BridgeStatus): string {
	const calls =
		s.inFlight.length === 0 ? "none" : s.inFlight.map(c => `${c.tool} (${Math.round(c.ageMs / 1000)} s)`).join(", ");
	return [
		`A2A bridge: ${s.url}`,
		`token: ${tokenPrefix(s.token)}`,
		`sessions: ${s.sessions}/${MAX_SESSIONS}`,
		`calls served: ${s.callsServed}`,
		`calls in flight: ${s.inFlight.length} ${calls === "none" ? "" : `— ${calls}`}`.trimEnd(),
		`host_llm=${s.takeover}`,
		`audit: ${s.auditPath}`,
	].join("\n");
}

/** A ready-to-paste `mcpServers` entry for `~/.omp/agent/mcp.json` (and clients with the same shape). */
export function mcpJson(url: string, token: string, name = "omp-host"): string {
	const entry = {
		mcpServers: {
			[name]: { type: "http", url, headers: { Authorization: `Bearer ${token}` }, timeout: MCP_JSON_TIMEOUT_MS },
		},
	};
	return JSON.stringify(entry, null, 2);
}
