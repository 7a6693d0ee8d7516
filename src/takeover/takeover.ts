/**
 * Host inference takeover (contract §8): while denied, the host's own model requests never leave
 * the process. Layers: a deny API plus a deny copy of Main's row; claimed providers whose lanes
 * skip fetch; a fetch tripwire keyed on the configured baseUrl hosts; overrides of noisy settings.
 * Invariants: arming is all or nothing (a failure rolls back every layer); restoring undoes only
 * what arming did and names on stderr what could not come back; nothing is persisted.
 */
import type { AuditRecord } from "../audit/record.ts";
import { errorText } from "../text/error-text.ts";
import { type Armed, claim, rearm, undo } from "./layers.ts";
import {
	claimsFor,
	createTripwire,
	type HostLlmState,
	planClaims,
	type Result,
	type TakeoverHost,
	tripwireHosts,
	uncoveredTransport,
} from "./plan.ts";

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

	/** Sets the switch and writes its one audit record; `sid` and `tokenName` are absent when no caller asked. */
	toggle(enabled: boolean, sid: string | null, tokenName?: string): Result<HostLlmState> {
		const r: Result<unknown> = enabled ? { ok: true, value: this.restore() } : this.arm();
		const isError = !r.ok;
		const who = tokenName === undefined ? { sid } : { sid, tokenName };
		this.#audit({ id: crypto.randomUUID(), ...who, phase: "done", tool: "host_llm", isError, args: { enabled } });
		if (!r.ok) this.#host.log(`a2a-bridge takeover: not armed: ${r.why}`);
		return r.ok ? { ok: true, value: this.state() } : r;
	}

	/** Arms every layer, or re-arms a new Main session when already armed. */
	arm(): Result<void> {
		if (this.#armed) {
			rearm(this.#host, this.#armed);
			return { ok: true, value: undefined };
		}
		// Refused whole rather than armed on a host whose provider layer moved (never a quiet no-op).
		const off = this.#host.unavailable?.() ?? null;
		if (off !== null) return { ok: false, code: "cannot_arm", why: off };
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
			for (const provider of plan.value) claim(this.#host, armed, rows, provider);
			tripwire.wrapper = createTripwire(tripwire.original, armed.hosts, () => tripwire.active, this.#host.log);
			this.#host.setFetch(tripwire.wrapper);
			rearm(this.#host, armed);
		} catch (err) {
			for (const problem of undo(this.#host, armed)) this.#host.log(`a2a-bridge takeover: rollback: ${problem}`);
			return { ok: false, code: "cannot_arm", why: errorText(err) };
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
			for (const provider of claimsFor(rows)) claim(this.#host, armed, rows, provider);
			armed.escaped = uncoveredTransport(rows, [...armed.claims.keys()]);
		} catch (err) {
			armed.escaped = errorText(err);
		}
		rearm(this.#host, armed);
		if (armed.escaped) this.#host.log(`a2a-bridge takeover: only the tripwire covers this: ${armed.escaped}`);
	}

	/** Undoes what arming did; returns (and logs) what could not come back. */
	restore(): string[] {
		const a = this.#armed;
		if (!a) return [];
		this.#armed = null;
		const problems = undo(this.#host, a);
		for (const p of problems) this.#host.log(`a2a-bridge takeover: not restored: ${p}`);
		return problems;
	}
}
