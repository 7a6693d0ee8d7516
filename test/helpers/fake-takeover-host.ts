/** A fake of the host the takeover acts on (model registry, settings, fetch), shared by unit and fuzz tests. */
import type { FetchFn, HostSettings, ModelRow, TakeoverHost } from "../../src/takeover/plan.ts";

export const row = (provider: string, id: string, api: string, baseUrl: string, transport?: string): ModelRow => ({
	provider,
	id,
	api,
	baseUrl,
	...(transport ? { transport } : {}),
});

export const PLACEHOLDER = row("placeholder", "small", "anthropic-messages", "http://127.0.0.1:4000/v1");
export const ANTHROPIC = row("anthropic", "opus", "anthropic-messages", "https://api.anthropic.com");
export const CODEX = row("openai-codex", "gpt", "openai-codex-responses", "https://chatgpt.com/backend-api");
export const OPENAI = row("openai", "gpt", "openai-responses", "https://api.openai.com/v1");

export class FakeSettings implements HostSettings {
	readonly base: Record<string, unknown> = { "retry.enabled": true, "autolearn.enabled": false };
	readonly overrides = new Map<string, unknown>();
	get(path: string): unknown {
		return this.overrides.has(path) ? this.overrides.get(path) : (this.base[path] ?? true);
	}
	override(path: string, value: unknown): void {
		this.overrides.set(path, value);
	}
	clearOverride(path: string): void {
		this.overrides.delete(path);
	}
}

/** A registry with static rows, runtime claims on top, and knobs for the failures the takeover must survive. */
export class FakeHost implements TakeoverHost {
	static: ModelRow[];
	claimed = new Map<string, ModelRow[]>();
	claimKeys: string[] = [];
	auth = new Set(["anthropic"]);
	denyApi = false;
	main: ModelRow | null;
	settings: HostSettings | null = new FakeSettings();
	fetchFn: FetchFn;
	readonly original: FetchFn;
	lines: string[] = [];
	/** Claims of this provider leave its rows as they were. */
	ignoreClaimOf: string | null = null;
	/** Releasing this provider loses its credential. */
	loseAuthOf: string | null = null;
	settle = Promise.withResolvers<void>();
	/** Why the host cannot be taken over (a missing host fact); null when it can. */
	unavailable = (): string | null => null;

	constructor(rows: ModelRow[] = [PLACEHOLDER, ANTHROPIC, CODEX, OPENAI], main: ModelRow | null = PLACEHOLDER) {
		this.static = rows;
		this.main = main;
		this.original = (async () => new Response("real network")) as unknown as FetchFn;
		this.fetchFn = this.original;
	}
	models = (): ModelRow[] => [
		...this.static.filter(r => !this.claimed.has(r.provider)),
		...[...this.claimed.values()].flat(),
	];
	hasAuth = (p: string) => this.auth.has(p);
	settled = () => this.settle.promise;
	registerDenyApi = () => {
		this.denyApi = true;
	};
	unregisterDenyApi = () => {
		this.denyApi = false;
	};
	claimProvider = (p: string, rows: ModelRow[]) => {
		this.claimKeys.push(p);
		if (p !== this.ignoreClaimOf) this.claimed.set(p, rows);
	};
	releaseProvider = (p: string) => {
		this.claimed.delete(p);
		if (p === this.loseAuthOf) this.auth.delete(p);
	};
	mainModel = () => this.main;
	setMainModel = (r: ModelRow) => {
		this.main = r;
	};
	mainSettings = () => this.settings;
	getFetch = () => this.fetchFn;
	setFetch = (f: FetchFn) => {
		this.fetchFn = f;
	};
	log = (line: string) => {
		this.lines.push(line);
	};
}
