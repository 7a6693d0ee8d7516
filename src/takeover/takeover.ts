/**
 * Host inference takeover (contract §8): while denied, the host's own model requests never leave
 * the process. Layers: a deny API plus a deny copy of Main's row; claimed providers whose lanes
 * skip fetch; a fetch tripwire keyed on the configured baseUrl hosts; overrides of noisy settings.
 * Invariants: arming is all or nothing (a failure rolls back every layer); restoring undoes only
 * what arming did and names on stderr what could not come back; nothing is persisted.
 */
import type { AuditRecord } from "../audit/log.ts";
import {
	claimsFor,
	createTripwire,
	DENY_API,
	denyCopy,
	type FetchFn,
	fingerprint,
	type HostLlmState,
	type HostSettings,
	type ModelRow,
	NOISY_SETTINGS,
	planClaims,
	type Result,
	type TakeoverHost,
	tripwireHosts,
	uncoveredTransport,
} from "./plan.ts";

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
