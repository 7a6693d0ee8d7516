/**
 * Watches the config for edits: by another process (`npm run token`, an editor), and the bridge's own `/a2a`
 * writes too, which find nothing new to apply. Directories are watched, not files: an atomic write renames a
 * new inode over the old one, which a file watch would lose. Two of them: the directory of the name the
 * environment gave (a link, in a dotfiles layout) and that of the file it reaches, so an edit of the file and
 * a re-pointed link are both seen; when the link points elsewhere, the new file's directory is watched
 * instead. Other names are ignored; a burst becomes one call after a pause.
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, sep } from "node:path";
import { type ConfigName, canonicalPath } from "./paths.ts";

const SETTLE_MS = 100;

type Log = (line: string) => void;

/** Watches `dir` for events naming `name`; a directory that cannot be watched is said once. */
function watchName(dir: string, name: string, hit: () => void, log: Log): () => void {
	let watcher: FSWatcher;
	try {
		watcher = watch(dir, { persistent: false }, (_event, file) => {
			if (file === null || file.toString() === name) hit();
		});
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		log(`A2A bridge: ${dir} not watched (${why}); edits of ${name} there apply at the next start`);
		return () => {};
	}
	watcher.on("error", err => log(`A2A bridge: watching ${dir} stopped: ${err.message}`));
	return () => watcher.close();
}

/** Calls `onChange` with the file the config's name reaches after each settled edit; returns the stop. */
export function watchConfigFile(name: ConfigName, onChange: (file: string) => void, log: Log): () => void {
	let timer: ReturnType<typeof setTimeout> | undefined;
	let file = name.file;
	const settled = (): void => {
		const now = canonicalPath(name.link, sep);
		if (now !== file) {
			file = now;
			unwatchFile();
			unwatchFile = watchName(dirname(file), basename(file), hit, log);
		}
		onChange(file);
	};
	const hit = (): void => {
		clearTimeout(timer);
		timer = setTimeout(settled, SETTLE_MS);
	};
	const unwatchLink = name.link === name.file ? () => {} : watchName(dirname(name.link), basename(name.link), hit, log);
	let unwatchFile = watchName(dirname(file), basename(file), hit, log);
	return () => {
		clearTimeout(timer);
		unwatchLink();
		unwatchFile();
	};
}
