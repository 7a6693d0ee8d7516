/**
 * The bridge's own paths, fixed once at start (contract §19: one spelling per own path). A path from the
 * environment is taken against the working directory the process had then and every link in it followed,
 * so each comparison, lock, record and watch uses the name any other process (`npm run token` given the
 * link or the file, a second host) derives for the same file. Compared only in that form.
 */
import { lstatSync, readlinkSync, type Stats } from "node:fs";
import { basename, dirname, isAbsolute, join, sep } from "node:path";
import { runtimePath } from "./runtime.ts";

/** Links one walk follows before it stops following them (the kernel's MAXSYMLINKS). */
export const MAX_LINK_HOPS = 40;

/** A directory and one name in it: where a link of a resolution sits, or the file it ends at. */
export interface DirName {
	dir: string;
	name: string;
}

/** The end of a resolution and each link met on the way (at most MAX_LINK_HOPS, in the order met). */
function walk(path: string): { at: string; links: DirName[] } {
	if (!isAbsolute(path)) throw new Error(`${path}: not an absolute path`);
	const todo = path.split(sep).filter(p => p !== "");
	const links: DirName[] = [];
	let at: string = sep;
	let missing = false;
	while (todo.length > 0) {
		const part = todo.shift() as string;
		if (part === ".") continue;
		if (part === "..") {
			at = dirname(at);
			continue;
		}
		const next = join(at, part);
		if (!missing) {
			let st: Stats | null = null;
			try {
				st = lstatSync(next);
			} catch {
				missing = true;
			}
			if (st?.isSymbolicLink() && links.length < MAX_LINK_HOPS) {
				links.push({ dir: at, name: part });
				const to = readlinkSync(next);
				if (isAbsolute(to)) at = sep;
				todo.unshift(...to.split(sep).filter(p => p !== ""));
				continue;
			}
		}
		at = next;
	}
	return { at, links };
}

/**
 * The path a write to `path` (absolute) reaches: each existing component that is a link is replaced by
 * what it points to, component by component, and `..` taken after the link it follows, as the kernel does;
 * from the first missing component on, the rest is taken as written. Throws on a relative path.
 */
export function reachedPath(path: string): string {
	return walk(path).at;
}

/**
 * Where a change can move what `path` (absolute) reaches: each link met resolving it, in the directory
 * that holds it, then the file it reaches; no pair twice. At most MAX_LINK_HOPS + 1 pairs, a loop included.
 */
export function resolutionHops(path: string): DirName[] {
	const { at, links } = walk(path);
	const end = at === sep ? [] : [{ dir: dirname(at), name: basename(at) }];
	const seen = new Set<string>();
	return [...links, ...end].filter(h => {
		const key = `${h.dir}${sep}${h.name}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}

/** `raw` as the kernel reaches it from `cwd` (absolute): absolute, every link followed, no `.`/`..`/`//`. */
export function canonicalPath(raw: string, cwd: string): string {
	return reachedPath(isAbsolute(raw) ? raw : `${cwd}${sep}${raw}`);
}

/** `raw` with its directories canonical and its own name kept: a config kept as a link stays that link. @internal */
export function namedPath(raw: string, cwd: string): string {
	const abs = isAbsolute(raw) ? raw : `${cwd}${sep}${raw}`;
	const name = basename(abs);
	if (name === "" || name === "." || name === "..") return canonicalPath(abs, cwd);
	return join(reachedPath(dirname(abs)), name);
}

/**
 * The config as the environment names it: `given` made absolute as written (re-resolved on each change, so a
 * re-pointed link anywhere on the way moves it), `link` (its directories canonical at start, maybe a symlink)
 * and the file that name reaches at start (`file`).
 */
export interface ConfigName {
	given: string;
	link: string;
	file: string;
}

/** The names of the config at `raw`, taken from `cwd`. */
export function configName(raw: string, cwd: string): ConfigName {
	const given = isAbsolute(raw) ? raw : `${cwd}${sep}${raw}`;
	return { given, link: namedPath(raw, cwd), file: canonicalPath(raw, cwd) };
}

/**
 * Every own file of a bridge whose config has `name` and has been at `files` (the file at start and where a
 * re-pointed link took it), writing the audit `auditFiles` (canonical): what `/blob` never writes.
 */
export function ownFiles(name: ConfigName, files: readonly string[], auditFiles: readonly string[]): string[] {
	const configs = [...new Set([name.link, name.file, ...files])];
	const runtimes = configs.map(runtimePath);
	return [...configs, ...configs.map(f => `${f}.lock`), ...auditFiles, ...runtimes, ...runtimes.map(f => `${f}.lock`)];
}
