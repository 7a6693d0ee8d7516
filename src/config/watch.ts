/**
 * Watches the config for edits by another process (`npm run token`, an editor; the bridge's own `/a2a` writes
 * find nothing new). Directories are watched, not files: an atomic write renames a new inode over the old
 * one, which a file watch would lose. Every hop of the name's resolution is watched: the directory holding
 * each link met on the way (a config link, a `current` link in a chain, a linked config directory) for that
 * link's name, and the reached file's directory for its name. Any event there re-resolves the whole name;
 * when the hops change the watch set follows. Other names are ignored; a burst becomes one call after a pause.
 */
import { type FSWatcher, watch } from "node:fs";
import { sep } from "node:path";
import { type ConfigName, canonicalPath, type DirName, resolutionHops } from "./paths.ts";

const SETTLE_MS = 100;
/** Directories said to be unwatchable, each once; past this many, later ones go unsaid. */
const MAX_SAID = 64;

type Log = (line: string) => void;

/** Watches `dir` for events naming one of `names`; a directory that cannot be watched is said once (`said`). */
function watchNames(dir: string, names: ReadonlySet<string>, hit: () => void, log: Log, said: Set<string>): () => void {
	let watcher: FSWatcher;
	try {
		watcher = watch(dir, { persistent: false }, (_event, file) => {
			if (file === null || names.has(file.toString())) hit();
		});
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		if (!said.has(dir) && said.size < MAX_SAID) {
			said.add(dir);
			log(`A2A bridge: ${dir} not watched (${why}); edits of ${[...names].join(", ")} there apply at the next start`);
		}
		return () => {};
	}
	watcher.on("error", err => log(`A2A bridge: watching ${dir} stopped: ${err.message}`));
	return () => watcher.close();
}

/** The hops of `given`'s resolution as a key: the same key, the same watch set. */
const hopsKey = (hops: readonly DirName[]): string => JSON.stringify(hops);

/** Calls `onChange` with the file the config's name reaches after each settled edit; returns the stop. */
export function watchConfigFile(name: ConfigName, onChange: (file: string) => void, log: Log): () => void {
	let timer: ReturnType<typeof setTimeout> | undefined;
	const said = new Set<string>();
	let key = "";
	let stops: (() => void)[] = [];
	const unwatchAll = (): void => {
		for (const stop of stops.splice(0)) stop();
	};
	// Re-arms only when the chain changed; a hop list is at most 41 pairs (paths.ts bounds the links followed).
	const arm = (): void => {
		const hops = resolutionHops(name.given);
		const next = hopsKey(hops);
		if (next === key) return;
		key = next;
		unwatchAll();
		const byDir = new Map<string, Set<string>>();
		for (const h of hops) byDir.set(h.dir, (byDir.get(h.dir) ?? new Set<string>()).add(h.name));
		stops = [...byDir].map(([dir, names]) => watchNames(dir, names, hit, log, said));
	};
	const settled = (): void => {
		arm();
		onChange(canonicalPath(name.given, sep));
	};
	const hit = (): void => {
		clearTimeout(timer);
		timer = setTimeout(settled, SETTLE_MS);
	};
	arm();
	return () => {
		clearTimeout(timer);
		unwatchAll();
	};
}
