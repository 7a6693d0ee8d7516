/**
 * The layers of the takeover (contract §8) as steps on one `Armed` record: claim a provider, cover
 * the live Main session, and undo all of it. `Takeover` decides when; these say how.
 */

import { errorText } from "../text/error-text.ts";
import {
	DENY_API,
	denyCopy,
	type FetchFn,
	fingerprint,
	type HostSettings,
	type ModelRow,
	NOISY_SETTINGS,
	type TakeoverHost,
	tripwireHosts,
} from "./plan.ts";

export interface Armed {
	hosts: Set<string>;
	/** Claimed provider → its fingerprint before the claim. */
	claims: Map<string, string>;
	overrides: Array<{ settings: HostSettings; path: string }>;
	tripwire: { original: FetchFn; wrapper: FetchFn; active: boolean };
	main: { original: ModelRow; deny: ModelRow } | null;
	/** Set when a later registry change escaped the claims: only the tripwire covers that part. */
	escaped: string | null;
}

export function claim(host: TakeoverHost, armed: Armed, rows: ModelRow[], provider: string): void {
	armed.claims.set(provider, fingerprint(rows, provider, host.hasAuth(provider)));
	host.claimProvider(provider, rows.filter(r => r.provider === provider).map(denyCopy));
	const after = host.models().filter(r => r.provider === provider);
	if (after.length === 0 || after.some(r => r.api !== DENY_API || r.transport)) {
		throw new Error(`provider '${provider}' could not be claimed (its rows still bypass the deny)`);
	}
}

/** Covers the live Main session and its settings; safe to repeat for a new Main session. */
export function rearm(host: TakeoverHost, armed: Armed): void {
	for (const h of tripwireHosts(host.models())) armed.hosts.add(h);
	const settings = host.mainSettings();
	if (settings && !armed.overrides.some(o => o.settings === settings)) {
		for (const [path, value] of NOISY_SETTINGS) {
			// Only paths we change are recorded, so restore never clears an override it did not set.
			if (settings.get(path) === value) continue;
			settings.override(path, value);
			armed.overrides.push({ settings, path });
		}
	}
	const live = host.mainModel();
	if (live && live.api !== DENY_API) {
		const deny = denyCopy(live);
		host.setMainModel(deny);
		armed.main = { original: live, deny };
	}
}

export function undo(host: TakeoverHost, a: Armed): string[] {
	const problems: string[] = [];
	const attempt = (what: string, fn: () => void): void => {
		try {
			fn();
		} catch (err) {
			problems.push(`${what}: ${errorText(err)}`);
		}
	};
	if (a.main) {
		const { original, deny } = a.main;
		if (host.mainModel() === deny) attempt("Main's model row", () => host.setMainModel(original));
		else problems.push("Main's model row was replaced while denied; left as it is");
	}
	for (const { settings, path } of a.overrides) attempt(`setting ${path}`, () => settings.clearOverride(path));
	a.tripwire.active = false;
	if (host.getFetch() === a.tripwire.wrapper) host.setFetch(a.tripwire.original);
	else if (a.tripwire.wrapper !== a.tripwire.original) {
		problems.push("globalThis.fetch was wrapped again while denied; the tripwire stays as a pass-through");
	}
	for (const provider of a.claims.keys()) attempt(`provider '${provider}'`, () => host.releaseProvider(provider));
	const rows = host.models();
	for (const [provider, before] of a.claims) {
		if (fingerprint(rows, provider, host.hasAuth(provider)) !== before) {
			problems.push(`provider '${provider}' did not come back as it was before the claim`);
		}
	}
	attempt("deny API", () => host.unregisterDenyApi());
	return problems;
}
