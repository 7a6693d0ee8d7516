/**
 * Bridge configuration: `~/.omp/agent/a2a-bridge.json` or `$A2A_BRIDGE_CONFIG`.
 * Invariants: fail closed (a present but malformed field refuses the start, naming file and field);
 * only an absent or non-string token is generated and written back (by file.ts, which owns
 * the disk). Pure apart from reading the environment for the default path.
 */
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { type BlobMode, type NamedToken, tokenProblem, validateBlobMode, validateTokens } from "./tokens.ts";

export type HostLlm = "allow" | "deny";

export interface BridgeConfig {
	port: number;
	token: string;
	host: string;
	host_llm: HostLlm;
	allowed_origins: string[];
	/** Named tokens beside the owner's (contract §14): identities, each with the host's full reach. */
	tokens: NamedToken[];
	/** What `/blob` serves: both ways, downloads only, or nothing. */
	blob: BlobMode;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export interface LoadedConfig {
	path: string;
	config: BridgeConfig;
	/** Non-fatal remarks for the operator (non-loopback bind, generated token). */
	warnings: string[];
}

export const CONFIG_DEFAULTS = { port: 0, host: "127.0.0.1", host_llm: "allow" as HostLlm };
/** Fields a file rebuilt from the live config leaves out while they hold their default (absent means it). */
export const OPTIONAL_DEFAULTS: Partial<Record<keyof BridgeConfig, unknown>> = {
	allowed_origins: [],
	tokens: [],
	blob: "write",
};

export function defaultConfigPath(env: Record<string, string | undefined> = process.env): string {
	const fromEnv = env.A2A_BRIDGE_CONFIG;
	return fromEnv && fromEnv.length > 0 ? fromEnv : join(homedir(), ".omp", "agent", "a2a-bridge.json");
}

/** 32 random bytes as unpadded base64url: always 43 characters. */
export function generateToken(): string {
	return randomBytes(32).toString("base64url");
}

/** localhost, 127.0.0.0/8, ::1 and the IPv4-mapped loopback ::ffff:127.0.0.0/104 in any IPv6 spelling. */
export function isLoopbackHost(host: string): boolean {
	const h = host.toLowerCase().replace(/^\[|\]$/g, "");
	if (h === "localhost" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
	if (!h.includes(":")) return false;
	let canonical: string;
	try {
		// The WHATWG URL parser writes an IPv6 address in its one compressed form (::ffff:7f00:1).
		canonical = new URL(`http://[${h}]/`).hostname;
	} catch {
		return false;
	}
	return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

/** Canonical `scheme://host[:port]` of an origin string, or null when it is not one. @internal */
export function normalizeOrigin(value: string): string | null {
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return null;
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") return null;
	if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== ""))
		return null;
	if (value.endsWith("/")) return null;
	return url.origin;
}

const fail = (file: string, field: string, rule: string): Parsed<never> => ({
	ok: false,
	message: `${file}: field '${field}' ${rule}`,
});

/**
 * Validates the raw JSON object. `token` may be absent (the caller generates one); everything else
 * that is present must be well-formed.
 */
export function validateConfig(
	raw: unknown,
	file: string,
): Parsed<Omit<BridgeConfig, "token"> & { token: string | undefined }> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return { ok: false, message: `${file}: must hold a JSON object` };
	}
	const obj = raw as Record<string, unknown>;
	// Present means present: a null field is malformed, not absent (only the token may be replaced).
	const field = (name: string, fallback: unknown): unknown => (name in obj ? obj[name] : fallback);
	const port = field("port", CONFIG_DEFAULTS.port);
	if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
		return fail(file, "port", "must be an integer in [0, 65535]");
	}
	let token: string | undefined;
	if (typeof obj.token === "string") {
		const why = tokenProblem(obj.token);
		if (why !== null) return fail(file, "token", why);
		token = obj.token;
	}
	const host = field("host", CONFIG_DEFAULTS.host);
	if (typeof host !== "string" || host.trim().length === 0) return fail(file, "host", "must be a non-empty string");
	const hostLlm = field("host_llm", CONFIG_DEFAULTS.host_llm);
	if (hostLlm !== "allow" && hostLlm !== "deny") return fail(file, "host_llm", 'must be "allow" or "deny"');
	const origins = field("allowed_origins", []);
	if (!Array.isArray(origins)) return fail(file, "allowed_origins", "must be an array of origin strings");
	const allowed: string[] = [];
	for (const [i, o] of origins.entries()) {
		const norm = typeof o === "string" ? normalizeOrigin(o) : null;
		if (norm === null) return fail(file, `allowed_origins[${i}]`, "must be an origin like http://host:port");
		allowed.push(norm);
	}
	const tokens = validateTokens(field("tokens", undefined), token);
	if (!tokens.ok) return fail(file, tokens.field, tokens.rule);
	const blob = validateBlobMode(field("blob", undefined));
	if (!blob.ok) return fail(file, blob.field, blob.rule);
	return {
		ok: true,
		value: { port, token, host, host_llm: hostLlm, allowed_origins: allowed, tokens: tokens.value, blob: blob.value },
	};
}
