/**
 * A config file edited while the bridge runs (`npm run token`, an editor): the file's token table becomes
 * the live one exactly (a secret moved between names included) through the same server calls as `/a2a
 * token …` (a revoked or replaced token's sessions and calls end); a change to a field whose row applies
 * at the next start (`edit` in src/config/config.ts) is said, not applied. An edit that fails validation
 * changes nothing. The one exception is fail-safe: a secret this host revoked or rotated away while the
 * file could not be written stays refused.
 */
import { type BridgeConfig, nextStartFields } from "../config/config.ts";
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

function applyConfigEdit(r: CommandTarget, seen: Partial<BridgeConfig>, notify: Notify): Partial<BridgeConfig> {
	let next: ReturnType<typeof readConfig>["config"];
	try {
		next = readConfig(r.configPath).config;
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		notify(`A2A bridge: config edit not applied (${why}); the live tokens are unchanged`, "warning");
		return seen;
	}
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
	if (said.length > 0) notify(`A2A bridge: config edit applied: ${said.join("; ")}`, "info");
	const atStart = nextStartFields();
	const later = atStart.filter(k => JSON.stringify(next[k]) !== JSON.stringify(seen[k]));
	if (later.length > 0) {
		const names = later.map(k => `'${k}'`).join(", ");
		notify(`A2A bridge: ${names} changed in ${r.configPath}; applies at the next start`, "info");
	}
	return { ...seen, ...Object.fromEntries(atStart.map(k => [k, next[k]])) };
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
