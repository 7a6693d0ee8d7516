/**
 * A config file edited while the bridge runs (`npm run token`, an editor): each field does what its row's
 * `edit` says (src/config/fields.ts). A live field is applied: the token table becomes the file's exactly
 * (a secret moved between names included) through the same server calls as `/a2a token …` (a revoked or
 * replaced token's sessions and calls end); any other live field is copied into the live config. A change
 * to a next-start field is said, not applied; a "never" field is ignored. An edit that fails validation
 * changes nothing. The one exception is fail-safe: a secret this host revoked or rotated away while the
 * file could not be written stays refused.
 */
import { type BridgeConfig, fieldsTaking } from "../config/config.ts";
import { pinPort, readConfig } from "../config/file.ts";
import type { ConfigName } from "../config/paths.ts";
import { publishRuntime } from "../config/runtime.ts";
import { tokenChanges } from "../config/tokens.ts";
import { watchConfigFile } from "../config/watch.ts";
import { errorText } from "../text/error-text.ts";
import type { CommandTarget } from "./a2a-command.ts";
import type { Notify } from "./notify.ts";

/** Files the config has been at that stay own paths: the first and the latest ones, older middle ones dropped. */
const MAX_CONFIG_FILES = 16;

/** A followed config: the stop, and every file it has been at (start first) for the own-path list. */
export interface Followed {
	stop: () => void;
	files: () => readonly string[];
}

/**
 * Publishes this host in the runtime record beside the config and applies each settled edit; a re-pointed
 * link anywhere on the name's way moves the config, and the record entry with it, so `npm run token` on
 * either name finds this host. The stop ends the watch and removes the entry.
 */
export function followConfig(
	name: ConfigName,
	r: CommandTarget,
	where: { url: string; port: number; cwd: string },
	notify: Notify,
	logLine: (line: string) => void,
): Followed {
	let unpublish = publishRuntime(r.configPath, where, logLine);
	const been = [r.configPath];
	const apply = configEditApplier(r, notify);
	const unwatch = watchConfigFile(
		name,
		file => {
			if (file !== r.configPath) {
				unpublish();
				r.configPath = file;
				if (!been.includes(file)) been.push(file);
				if (been.length > MAX_CONFIG_FILES) been.splice(1, 1);
				unpublish = publishRuntime(file, where, logLine);
			}
			apply();
		},
		logLine,
	);
	const stop = (): void => {
		unwatch();
		unpublish();
	};
	return { stop, files: () => been };
}

/**
 * The handler for each settled edit; start-time fields are compared with the last edit seen, so each change
 * is said once. @internal
 */
export function configEditApplier(r: CommandTarget, notify: Notify): () => void {
	let seen: Partial<BridgeConfig> = { ...r.config };
	return () => {
		seen = applyConfigEdit(r, seen, notify);
	};
}

type Next = ReturnType<typeof readConfig>["config"];
/** Applies a live field that needs more than a copy; answers what to say. */
type Applier = (r: CommandTarget, next: Next) => string[];

/**
 * Live fields with handling of their own (one applier may serve several). Any other live row is copied into
 * `r.config`, the object its readers read at each use (`BlobDeps.config()`, `/a2a`). @internal
 */
export const OWN_HANDLING: Partial<Record<keyof BridgeConfig, Applier>> = { token: tokenTable, tokens: tokenTable };

function applyConfigEdit(r: CommandTarget, seen: Partial<BridgeConfig>, notify: Notify): Partial<BridgeConfig> {
	let next: Next;
	try {
		next = readConfig(r.configPath).config;
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		notify(`A2A bridge: config edit not applied (${why}); the live tokens are unchanged`, "warning");
		return seen;
	}
	const said: string[] = [];
	const ran = new Set<Applier>();
	for (const k of fieldsTaking("live")) {
		const own = OWN_HANDLING[k];
		if (own !== undefined) {
			if (!ran.has(own)) said.push(...own(r, next));
			ran.add(own);
		} else if (!same(next[k], r.config[k])) {
			said.push(`'${k}' ${next[k] === undefined ? "cleared" : "applied"}`);
			copyField(r.config, next, k);
		}
	}
	if (said.length > 0) notify(`A2A bridge: config edit applied: ${said.join("; ")}`, "info");
	const atStart = fieldsTaking("next start");
	const later = atStart.filter(k => !same(next[k], seen[k]));
	if (later.length > 0) {
		const names = later.map(k => `'${k}'`).join(", ");
		notify(`A2A bridge: ${names} changed in ${r.configPath}; applies at the next start`, "info");
	}
	return { ...seen, ...Object.fromEntries(atStart.map(k => [k, next[k]])) };
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A field without a value (no default, left out of the file) leaves the live config too. */
function copyField(live: BridgeConfig, next: Next, k: keyof BridgeConfig): void {
	const to = live as unknown as Record<string, unknown>;
	if (next[k] === undefined) delete to[k];
	else to[k] = next[k];
}

/**
 * The file's token table becomes the live one exactly, through the server calls `/a2a token …` makes; a
 * secret this host revoked while the file could not be written stays refused (said, with why).
 */
function tokenTable(r: CommandTarget, next: Next): string[] {
	const live = r.server.tokenNames().map(name => ({ name, token: r.server.secretOf(name) ?? "" }));
	const inFile = new Set([next.token, ...next.tokens.map(t => t.token)]);
	for (const secret of r.unsaved) if (!inFile.has(secret)) r.unsaved.delete(secret);
	const changes = tokenChanges(live, next.token, next.tokens);
	const said: string[] = [];
	for (const t of changes.set) {
		if (r.unsaved.has(t.token)) {
			said.push(
				`token '${t.name}' in the file holds a secret this host revoked (the file could not be written then); it stays refused`,
			);
			continue;
		}
		const known = r.server.secretOf(t.name) !== undefined;
		r.server.setToken(t.name, t.token);
		said.push(known ? `token '${t.name}' has a new secret (its old sessions are refused)` : `token '${t.name}' added`);
	}
	for (const name of changes.revoke) {
		r.server.revokeToken(name);
		said.push(`token '${name}' revoked (its sessions and calls in flight ended)`);
	}
	return said;
}

/** Writes the port a first start bound into the config; whether it did (a failure is said, never fatal). */
export function pinFirstPort(configPath: string, port: number, notify: Notify): boolean {
	const notes: string[] = [];
	try {
		return pinPort(configPath, port, notes);
	} catch (err) {
		notify(`A2A bridge: port ${port} not written to the config: ${errorText(err)}`, "warning");
		return false;
	} finally {
		for (const n of notes) notify(`A2A bridge: ${n}`, "warning");
	}
}
