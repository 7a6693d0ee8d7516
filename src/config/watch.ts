/**
 * Watches the config file for edits by another process (`npm run token`, an editor). The directory is
 * watched, not the file: an atomic write renames a new inode over the old one, which a file watch would
 * lose. Events for other names (temp files, the audit log, the runtime record) are ignored; a burst of
 * events becomes one call after a short pause.
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";

const SETTLE_MS = 100;

export function watchConfigFile(path: string, onChange: () => void, log: (line: string) => void): () => void {
	const name = basename(path);
	let timer: ReturnType<typeof setTimeout> | undefined;
	let watcher: FSWatcher;
	try {
		watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
			if (file !== null && file.toString() !== name) return;
			clearTimeout(timer);
			timer = setTimeout(onChange, SETTLE_MS);
		});
	} catch (err) {
		log(
			`A2A bridge: ${path} not watched (${err instanceof Error ? err.message : String(err)}); edits apply at the next start`,
		);
		return () => {};
	}
	watcher.on("error", err => log(`A2A bridge: watching ${path} stopped: ${err.message}`));
	return () => {
		clearTimeout(timer);
		watcher.close();
	};
}
