/**
 * What the takeover arms, decided without touching the host (contract §8): which hosts the fetch
 * tripwire refuses, which providers are claimed behind the deny API, whether a configuration can be
 * covered honestly at all, and the tripwire itself. Pure except for `createTripwire`'s wrapper.
 */
import type { Refused } from "../core/types.ts";

export const DENY_API = "a2a-deny-api";
export const DENY_MESSAGE = "a2a-bridge takeover: host inference is disabled";
/** The placeholder key of claimed rows: the registry wants one, and it keeps OAuth refreshes off the wire. */
export const CLAIM_API_KEY = "a2a-bridge-takeover";
/** Read per use (host facts §8): retries, model fallback, compaction, reminders, autolearn, cache refresh. */
export const NOISY_SETTINGS: ReadonlyArray<readonly [string, unknown]> = [
	["retry.enabled", false],
	["retry.modelFallback", false],
	["compaction.enabled", false],
	["todo.reminders", false],
	["autolearn.enabled", false],
	["providers.cacheRetention", "long"],
];

export interface ModelRow {
	provider: string;
	id: string;
	api: string;
	baseUrl: string;
	transport?: string;
}

export interface HostSettings {
	get(path: string): unknown;
	override(path: string, value: unknown): void;
	clearOverride(path: string): void;
}

export type FetchFn = typeof fetch;

/** What the takeover needs from the live process; the entry fills it, tests pass a fake. */
export interface TakeoverHost {
	/** Every row of the shared registry: subagents build their rows from these. */
	models(): ModelRow[];
	hasAuth(provider: string): boolean;
	/** Resolves once the registry's start-up refresh has settled; it can re-apply config over claimed rows. */
	settled(): Promise<void>;
	/** Registered so that a subagent spawn cannot remove it (host facts §0.2). */
	registerDenyApi(): void;
	unregisterDenyApi(): void;
	/** Replaces the provider's rows with `rows` (already deny copies) under CLAIM_API_KEY. */
	claimProvider(provider: string, rows: ModelRow[]): void;
	releaseProvider(provider: string): void;
	/** The live Main session's row and settings; null when there is no live Main. */
	mainModel(): ModelRow | null;
	setMainModel(row: ModelRow): void;
	mainSettings(): HostSettings | null;
	getFetch(): FetchFn;
	setFetch(f: FetchFn): void;
	log(line: string): void;
	/** Why the host cannot be taken over (a host fact is missing, docs/host-facts.md); null when it can. */
	unavailable?(): string | null;
}

export type Result<T> = { ok: true; value: T } | Refused<"cannot_arm">;
export interface HostLlmState {
	enabled: boolean;
	denied: number;
	degraded: boolean;
}

/** `host:port` of a URL, lowercased, default port dropped; null when it does not parse. @internal */
export function urlHost(url: string): string | null {
	try {
		return new URL(url).host.toLowerCase() || null;
	} catch {
		return null;
	}
}

/** The hosts the tripwire keys on: those of every configured baseUrl. */
export function tripwireHosts(rows: readonly ModelRow[]): Set<string> {
	const hosts = new Set<string>();
	for (const r of rows) {
		const h = urlHost(r.baseUrl);
		if (h) hosts.add(h);
	}
	return hosts;
}

/** The host a fetch call is aimed at, for a string, URL or Request input. @internal */
export function requestHost(input: unknown): string | null {
	if (typeof input === "string") return urlHost(input);
	if (input instanceof URL) return urlHost(input.href);
	if (input instanceof Request) return urlHost(input.url);
	return null;
}

/** Lanes that never reach `globalThis.fetch` (host facts §9): node:https, WebSocket, http2. @internal */
export function bypassesFetch(row: ModelRow): boolean {
	if (row.provider === "anthropic" && row.api === "anthropic-messages" && row.baseUrl.startsWith("https:")) return true;
	return (
		["openai-codex-responses", "cursor-agent", "gitlab-duo-agent"].includes(row.api) || row.provider === "gitlab-duo"
	);
}

/** The providers to claim: those with a row on a lane that skips fetch. */
export const claimsFor = (rows: readonly ModelRow[]): string[] =>
	[...new Set(rows.filter(bypassesFetch).map(r => r.provider))].sort();

/** Why the deny cannot honestly cover `rows` (a transport on an unclaimed provider), or null. */
export function uncoveredTransport(rows: readonly ModelRow[], claims: readonly string[]): string | null {
	const r = rows.find(row => row.transport && !claims.includes(row.provider));
	return r
		? `provider '${r.provider}' (model ${r.id}) has transport '${r.transport}', which the deny does not claim`
		: null;
}

/** Providers to claim, or a refusal to arm at all. */
export function planClaims(rows: readonly ModelRow[]): Result<string[]> {
	const claims = claimsFor(rows);
	const uncovered = uncoveredTransport(rows, claims);
	if (uncovered) return { ok: false, code: "cannot_arm", why: `${uncovered}; host inference stays on` };
	return { ok: true, value: claims };
}

/** What must come back after a release: the provider's rows and whether it has a credential. */
export function fingerprint(rows: readonly ModelRow[], provider: string, hasAuth: boolean): string {
	const keys = rows
		.filter(r => r.provider === provider)
		.map(r => [r.id, r.api, r.baseUrl, r.transport ?? ""].join(" "));
	return JSON.stringify({ rows: keys.sort(), hasAuth });
}

export const denyCopy = (row: ModelRow): ModelRow => ({ ...row, api: DENY_API, transport: undefined });

/** A fetch that answers requests to `hosts` with a non-retryable 403 while `isActive()`, and passes the rest on. */
export function createTripwire(
	original: FetchFn,
	hosts: Set<string>,
	isActive: () => boolean,
	log: (l: string) => void,
) {
	const body = JSON.stringify({ type: "error", error: { type: "permission_error", message: DENY_MESSAGE } });
	const wrapper = (async (input: Parameters<FetchFn>[0], init?: Parameters<FetchFn>[1]) => {
		const host = requestHost(input);
		if (!isActive() || host === null || !hosts.has(host)) return original(input, init);
		log(`a2a-bridge takeover: refused a model request to ${host}`);
		return new Response(body, { status: 403, headers: { "content-type": "application/json" } });
	}) as FetchFn;
	if ("preconnect" in original) Object.assign(wrapper, { preconnect: original.preconnect });
	return wrapper;
}
