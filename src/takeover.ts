/**
 * Host inference takeover (contract §8): while denied, the host's own model requests never leave
 * the process. Layers: a deny API plus a deny copy of Main's row; claimed providers whose lanes
 * skip fetch; a fetch tripwire keyed on the configured baseUrl hosts; overrides of noisy settings.
 * Invariants: arming is all or nothing (a failure rolls back every layer); restoring undoes only
 * what arming did and names on stderr what could not come back; nothing is persisted.
 */
import type { AuditRecord } from "./audit.ts";
import type { ExtraRoute } from "./types.ts";

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
const MAX_BODY_BYTES = 1024;

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
}

export type Result<T> = { ok: true; value: T } | { ok: false; code: "cannot_arm"; message: string };
export interface HostLlmState {
	enabled: boolean;
	denied: number;
	degraded: boolean;
}

/** `host:port` of a URL, lowercased, default port dropped; null when it does not parse. */
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

/** The host a fetch call is aimed at, for a string, URL or Request input. */
export function requestHost(input: unknown): string | null {
	if (typeof input === "string") return urlHost(input);
	if (input instanceof URL) return urlHost(input.href);
	if (input instanceof Request) return urlHost(input.url);
	return null;
}

/** Lanes that never reach `globalThis.fetch` (host facts §9): node:https, WebSocket, http2. */
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
	if (uncovered) return { ok: false, code: "cannot_arm", message: `${uncovered}; host inference stays on` };
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

interface Armed {
	hosts: Set<string>;
	/** Claimed provider → its fingerprint before the claim. */
	claims: Map<string, string>;
	overrides: Array<{ settings: HostSettings; path: string }>;
	tripwire: { original: FetchFn; wrapper: FetchFn; active: boolean };
	main: { original: ModelRow; deny: ModelRow } | null;
	/** Set when a later registry change escaped the claims: only the tripwire covers that part. */
	escaped: string | null;
}

/** The switch. `arm()`/`restore()` act; `toggle()` is what the route and the start-up arming call. */
export class Takeover {
	#armed: Armed | null = null;
	readonly #host: TakeoverHost;
	readonly #audit: (record: AuditRecord) => void;

	constructor(host: TakeoverHost, audit: (record: AuditRecord) => void) {
		this.#host = host;
		this.#audit = audit;
	}

	get isDenied(): boolean {
		return this.#armed !== null;
	}

	state(): HostLlmState {
		const a = this.#armed;
		if (!a) return { enabled: true, denied: 0, degraded: false };
		const live = this.#host.mainModel();
		const covered = a.main !== null && live === a.main.deny;
		const names = new Set(a.claims.keys());
		if (covered && a.main) names.add(a.main.deny.provider);
		return { enabled: false, denied: names.size, degraded: !covered || a.escaped !== null };
	}

	/** For `/a2a`: `allow`, `deny`, or `deny (tripwire only)` when Main's row is not the deny copy. */
	label(): string {
		const s = this.state();
		return s.enabled ? "allow" : s.degraded ? "deny (tripwire only)" : "deny";
	}

	/** Sets the switch and writes its one audit record; `sid` is null when no caller asked. */
	toggle(enabled: boolean, sid: string | null): Result<HostLlmState> {
		const r: Result<unknown> = enabled ? { ok: true, value: this.restore() } : this.arm();
		const isError = !r.ok;
		this.#audit({ id: crypto.randomUUID(), sid, phase: "done", tool: "host_llm", isError, args: { enabled } });
		if (!r.ok) this.#host.log(`a2a-bridge takeover: not armed: ${r.message}`);
		return r.ok ? { ok: true, value: this.state() } : r;
	}

	/** Arms every layer, or re-arms a new Main session when already armed. */
	arm(): Result<void> {
		if (this.#armed) {
			this.#rearm(this.#armed);
			return { ok: true, value: undefined };
		}
		const rows = this.#host.models();
		const plan = planClaims(rows);
		if (!plan.ok) return plan;
		const tripwire = { original: this.#host.getFetch(), wrapper: this.#host.getFetch(), active: true };
		const armed: Armed = {
			hosts: tripwireHosts(rows),
			claims: new Map(),
			overrides: [],
			tripwire,
			main: null,
			escaped: null,
		};
		try {
			this.#host.registerDenyApi();
			for (const provider of plan.value) this.#claim(armed, rows, provider);
			tripwire.wrapper = createTripwire(tripwire.original, armed.hosts, () => tripwire.active, this.#host.log);
			this.#host.setFetch(tripwire.wrapper);
			this.#rearm(armed);
		} catch (err) {
			for (const problem of this.#undo(armed)) this.#host.log(`a2a-bridge takeover: rollback: ${problem}`);
			return { ok: false, code: "cannot_arm", message: err instanceof Error ? err.message : String(err) };
		}
		this.#armed = armed;
		void this.#host.settled().then(() => this.#reclaim(armed));
		return { ok: true, value: undefined };
	}

	/** Claims again on the settled registry, so claims and snapshots match what a release gives back. */
	#reclaim(armed: Armed): void {
		if (this.#armed !== armed) return;
		try {
			for (const provider of armed.claims.keys()) this.#host.releaseProvider(provider);
			armed.claims.clear();
			const rows = this.#host.models();
			for (const provider of claimsFor(rows)) this.#claim(armed, rows, provider);
			armed.escaped = uncoveredTransport(rows, [...armed.claims.keys()]);
		} catch (err) {
			armed.escaped = err instanceof Error ? err.message : String(err);
		}
		this.#rearm(armed);
		if (armed.escaped) this.#host.log(`a2a-bridge takeover: only the tripwire covers this: ${armed.escaped}`);
	}

	/** Undoes what arming did; returns (and logs) what could not come back. */
	restore(): string[] {
		const a = this.#armed;
		if (!a) return [];
		this.#armed = null;
		const problems = this.#undo(a);
		for (const p of problems) this.#host.log(`a2a-bridge takeover: not restored: ${p}`);
		return problems;
	}

	#claim(armed: Armed, rows: ModelRow[], provider: string): void {
		armed.claims.set(provider, fingerprint(rows, provider, this.#host.hasAuth(provider)));
		this.#host.claimProvider(provider, rows.filter(r => r.provider === provider).map(denyCopy));
		const after = this.#host.models().filter(r => r.provider === provider);
		if (after.length === 0 || after.some(r => r.api !== DENY_API || r.transport)) {
			throw new Error(`provider '${provider}' could not be claimed (its rows still bypass the deny)`);
		}
	}

	/** Covers the live Main session and its settings; safe to repeat for a new Main session. */
	#rearm(armed: Armed): void {
		for (const h of tripwireHosts(this.#host.models())) armed.hosts.add(h);
		const settings = this.#host.mainSettings();
		if (settings && !armed.overrides.some(o => o.settings === settings)) {
			for (const [path, value] of NOISY_SETTINGS) {
				// Only paths we change are recorded, so restore never clears an override it did not set.
				if (settings.get(path) === value) continue;
				settings.override(path, value);
				armed.overrides.push({ settings, path });
			}
		}
		const live = this.#host.mainModel();
		if (live && live.api !== DENY_API) {
			const deny = denyCopy(live);
			this.#host.setMainModel(deny);
			armed.main = { original: live, deny };
		}
	}

	#undo(a: Armed): string[] {
		const problems: string[] = [];
		const attempt = (what: string, fn: () => void): void => {
			try {
				fn();
			} catch (err) {
				problems.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
			}
		};
		if (a.main) {
			const { original, deny } = a.main;
			if (this.#host.mainModel() === deny) attempt("Main's model row", () => this.#host.setMainModel(original));
			else problems.push("Main's model row was replaced while denied; left as it is");
		}
		for (const { settings, path } of a.overrides) attempt(`setting ${path}`, () => settings.clearOverride(path));
		a.tripwire.active = false;
		if (this.#host.getFetch() === a.tripwire.wrapper) this.#host.setFetch(a.tripwire.original);
		else if (a.tripwire.wrapper !== a.tripwire.original) {
			problems.push("globalThis.fetch was wrapped again while denied; the tripwire stays as a pass-through");
		}
		for (const provider of a.claims.keys())
			attempt(`provider '${provider}'`, () => this.#host.releaseProvider(provider));
		const rows = this.#host.models();
		for (const [provider, before] of a.claims) {
			if (fingerprint(rows, provider, this.#host.hasAuth(provider)) !== before) {
				problems.push(`provider '${provider}' did not come back as it was before the claim`);
			}
		}
		attempt("deny API", () => this.#host.unregisterDenyApi());
		return problems;
	}
}

/** The body as text, or null past MAX_BODY_BYTES (counted on the stream: no Content-Length is trusted). */
async function readSmallBody(req: Request): Promise<string | null> {
	const chunks: Uint8Array[] = [];
	let size = 0;
	for await (const chunk of req.body ?? []) {
		size += chunk.byteLength;
		if (size > MAX_BODY_BYTES) return null;
		chunks.push(chunk);
	}
	return new TextDecoder().decode(Buffer.concat(chunks));
}

/** `GET /host-llm` → state; `POST {"enabled": boolean}` → toggle (contract §8). */
export function createHostLlmRoute(takeover: Takeover): ExtraRoute {
	const error = (status: number, code: string, message: string, extra: object = {}) =>
		Response.json({ ...extra, error: message, code }, { status });
	return {
		methods: ["GET", "POST"],
		async handle(req, { sid }) {
			if (req.method === "GET") return Response.json(takeover.state());
			const text = await readSmallBody(req);
			if (text === null) return error(413, "body_too_large", `request body larger than ${MAX_BODY_BYTES} bytes`);
			let body: unknown;
			try {
				body = JSON.parse(text);
			} catch {
				return error(400, "invalid_body", 'body must be JSON: {"enabled": true|false}');
			}
			const enabled = (body as { enabled?: unknown } | null)?.enabled;
			if (typeof body !== "object" || Array.isArray(body) || typeof enabled !== "boolean") {
				return error(400, "invalid_body", "field 'enabled' must be a boolean");
			}
			const r = takeover.toggle(enabled, sid);
			return r.ok ? Response.json(r.value) : error(409, r.code, r.message, takeover.state());
		},
	};
}
