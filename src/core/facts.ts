/**
 * Facts both MCP eras on the endpoint share (contract §5, §13): the versions served, how a request
 * is assigned its era, the body limit and who the server says it is. A leaf: eras import it, never
 * each other.
 */

/** The 2025 versions, served with sessions (legacy.ts). */
export const LEGACY_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"] as const;
/** What `initialize` answers when the client asks for a version it does not list. */
export const LATEST_LEGACY_VERSION = "2025-11-25";
/** The sessionless era (modern.ts). */
const MODERN_VERSION = "2026-07-28";
/** Every version the endpoint serves (discover and -32022 name it). */
export const SERVED_VERSIONS: readonly string[] = [...LEGACY_VERSIONS, MODERN_VERSION];

/** A JSON-RPC body on the MCP route is at most this large (both eras). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export const SERVER_NAME = "omp-a2a-bridge";
export interface ServerInfo {
	name: string;
	version: string;
}

export type Era = "modern" | "legacy" | "unsupported";

/** The era of a request from its `MCP-Protocol-Version` header; absent means the 2025 default. */
export function eraOf(header: string | null): Era {
	if (header === null) return "legacy";
	const v = header.trim();
	if (v === MODERN_VERSION) return "modern";
	return (LEGACY_VERSIONS as readonly string[]).includes(v) ? "legacy" : "unsupported";
}

/** `data` of the -32022 answer: what is served and what was asked for. */
export const unsupportedData = (requested: string): { supported: readonly string[]; requested: string } => ({
	supported: SERVED_VERSIONS,
	requested,
});
