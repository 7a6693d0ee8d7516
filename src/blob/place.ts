/**
 * Where an upload writes, held open (contract §15, §19; issue 38.2). The walk goes from `/` one component at
 * a time, each directory opened O_DIRECTORY|O_NOFOLLOW inside the one before, links read and followed (a
 * final one too, bounded), and every name put to the own-path rule (blob/own.ts) on the directory it is in.
 * It ends in a held directory: every later step names files there as `/proc/self/fd/<fd>/<name>`, so the
 * directory that was checked is the one written, whatever is renamed or swapped meanwhile.
 */
import {
	closeSync,
	constants,
	fstatSync,
	lstatSync,
	mkdirSync,
	openSync,
	readlinkSync,
	rmdirSync,
	type Stats,
	statSync,
} from "node:fs";
import { isAbsolute, join, sep } from "node:path";
import { MAX_LINK_HOPS } from "../config/paths.ts";
import type { Refused } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { errno } from "./context.ts";
import { type OwnFiles, ownFilesOf, ownName, ownTwin } from "./own.ts";
import type { BlobCode } from "./parse.ts";
import { notRegular } from "./target.ts";

// Why /proc/self/fd rather than openat through bun:ffi: Linux resolves that link to the open directory
// itself, as openat(fd, …) does, and node:fs keeps its flags and errors. Where the link does not name the
// open directory (no procfs), writes are refused rather than done by name, said once on host stderr.
const FD_DIR = "/proc/self/fd";
const DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A directory held open, with its reached path (for replies and messages) and what `fstat` said at open. */
export interface Dir {
	fd: number;
	path: string;
	st: Stats;
}

/** How fs calls name the held directory itself, or `name` inside it. */
export const dirAt = (dir: Dir): string => `${FD_DIR}/${dir.fd}`;
export const inDir = (dir: Dir, name: string): string => `${FD_DIR}/${dir.fd}/${name}`;

export interface Place {
	/** The deepest existing directory on the way, held open. */
	dir: Dir;
	/** Directories still to make below `dir`, in order: a new target's parents, their names already checked. */
	missing: string[];
	/** The file's name in that directory. */
	name: string;
	/** The file as reached: what replies, lock keys and staging names use. */
	target: string;
	/** The last component was a link, followed. */
	linked: boolean;
	/** The own files the walk checked against: an opened file is checked against them too. */
	own: Extract<OwnFiles, { ok: true }>["files"];
	/** Directories `make` created, each with its parent held open: what `unmake` removes. */
	made: Array<{ parent: Dir; name: string }>;
}
export type Reached = { ok: true; place: Place } | Refused<BlobCode>;

/** A thrown fs error as text, the held directories' /proc names put back as the paths they stand for. */
export function shown(err: unknown, ...dirs: readonly Dir[]): string {
	let text = errorText(err);
	for (const d of dirs) text = text.replaceAll(dirAt(d), d.path);
	return text;
}

function openDir(at: string, path: string): Dir {
	const fd = openSync(at, DIR);
	try {
		return { fd, path, st: fstatSync(fd) };
	} catch (err) {
		closeSync(fd);
		throw err;
	}
}

let toldUnpinned = false;

/** `/`, held open, once it is clear that `/proc/self/fd/<fd>` names the very directory opened. */
function openRoot(log: (line: string) => void): Dir | string {
	const root = openDir("/", "/");
	try {
		const seen = statSync(dirAt(root));
		if (seen.dev === root.st.dev && seen.ino === root.st.ino) return root;
	} catch {
		// No procfs: refused below.
	}
	closeSync(root.fd);
	const why = `${FD_DIR} does not name open directories here (is /proc mounted?): /blob refuses every write rather than write by path name`;
	if (!toldUnpinned) log(`a2a-bridge: /blob: ${why}`);
	toldUnpinned = true;
	return why;
}

/** What stat (`follow`) or lstat says of `path`; null when nothing is there, or for any stat failure. */
function statAt(path: string, follow: boolean): Stats | null {
	try {
		return follow ? statSync(path) : lstatSync(path);
	} catch (err) {
		if (follow || errno(err) === "ENOENT") return null;
		throw err;
	}
}

/** What the link at `at` holds; null when it is no link any more (swapped since the look). */
function readLink(at: string): string | null {
	try {
		return readlinkSync(at);
	} catch (err) {
		if (errno(err) === "EINVAL") return null;
		throw err;
	}
}

/** Where a walk of `reach` stands: the directory held, the parts still to walk, the links followed. */
interface Walk {
	path: string;
	cur: Dir;
	todo: string[];
	hops: number;
	linked: boolean;
}

/** Holds `next` in place of the walk's directory. */
function move(w: Walk, next: Dir): void {
	closeSync(w.cur.fd);
	w.cur = next;
}

/** A link or a non-directory at `part` on the way: the walk follows the link, or the refusal (code, why). */
function follow(w: Walk, part: string, last: boolean, st: Stats): [BlobCode, string] | null {
	if (!st.isSymbolicLink())
		return ["write_failed", `cannot write ${w.path}: ${join(w.cur.path, part)} is not a directory`];
	if (++w.hops > MAX_LINK_HOPS)
		return ["write_failed", `cannot write ${w.path}: more than ${MAX_LINK_HOPS} links on the way`];
	// A kernel link (`/dev/stdin` → /proc/self/fd/0 → a pipe) names no path: refused by what it reaches.
	const reached = last ? statAt(inDir(w.cur, part), true) : null;
	if (reached !== null && !reached.isFile() && !reached.isDirectory()) {
		return ["not_regular_file", notRegular(w.path, reached)];
	}
	const to = readLink(inDir(w.cur, part));
	if (to === null) {
		w.todo.unshift(part);
		return null;
	}
	if (last) w.linked = true;
	if (isAbsolute(to)) move(w, openDir("/", "/"));
	w.todo.unshift(...to.split(sep).filter(p => p !== ""));
	return null;
}

/**
 * Walks to where an upload to `path` (absolute, lexically resolved) writes, deciding on each directory it
 * holds whether a name there is the bridge's own (`own` lists the own files). Makes nothing: `make` does.
 */
export function reach(path: string, own: readonly string[], log: (line: string) => void): Reached {
	const files = ownFilesOf(own);
	if (!files.ok) return { ok: false, code: "own_file", why: `${path} may be the bridge's own file (${files.why})` };
	const root = openRoot(log);
	if (typeof root === "string") return { ok: false, code: "write_failed", why: `cannot write ${path}: ${root}` };
	const w: Walk = { path, cur: root, todo: path.split(sep).filter(p => p !== ""), hops: 0, linked: false };
	const fail = (code: BlobCode, why: string): Reached => {
		closeSync(w.cur.fd);
		return { ok: false, code, why };
	};
	const missing: string[] = [];
	try {
		while (w.todo.length > 0) {
			const part = w.todo.shift() as string;
			const last = w.todo.length === 0;
			if (part === "." || part === "..") {
				if (last) break;
				if (part === ".." && missing.length > 0) missing.pop();
				else if (part === "..") move(w, openDir(inDir(w.cur, ".."), join(w.cur.path, "..")));
				continue;
			}
			const dir =
				missing.length === 0 ? { path: w.cur.path, st: w.cur.st } : { path: join(w.cur.path, ...missing), st: null };
			const mine = ownName(files.files, dir, part, last ? undefined : path);
			if (mine !== null) return fail("own_file", mine);
			const st = missing.length === 0 ? statAt(inDir(w.cur, part), false) : null;
			if (st === null || (last && !st.isSymbolicLink())) {
				if (!last) {
					missing.push(part);
					continue;
				}
				const twin = st === null ? null : ownTwin(files.files, join(dir.path, part), st);
				if (twin !== null) return fail("own_file", twin);
				const place = { dir: w.cur, missing, name: part, linked: w.linked, own: files.files, made: [] };
				return { ok: true, place: { ...place, target: join(w.cur.path, ...missing, part) } };
			}
			if (st.isSymbolicLink() || !st.isDirectory()) {
				const refused = follow(w, part, last, st);
				if (refused !== null) return fail(...refused);
				continue;
			}
			try {
				move(w, openDir(inDir(w.cur, part), join(w.cur.path, part)));
			} catch (err) {
				// Swapped for a link or a file since the look: look again.
				const changed = errno(err) === "ELOOP" || errno(err) === "ENOTDIR";
				if (!changed || ++w.hops > MAX_LINK_HOPS) throw err;
				w.todo.unshift(part);
			}
		}
		return fail("is_directory", `${path} reaches a directory`);
	} catch (err) {
		return fail("write_failed", `cannot write ${path}: ${shown(err, w.cur)}`);
	}
}

/** Makes the directories a new target still lacks, one at a time, each inside the one held before it. */
export function make(place: Place): void {
	while (place.missing.length > 0) {
		const name = place.missing[0] as string;
		const parent = place.dir;
		try {
			mkdirSync(inDir(parent, name));
			place.made.push({ parent, name });
		} catch (err) {
			if (errno(err) !== "EEXIST") throw new Error(shown(err, parent));
		}
		try {
			place.dir = openDir(inDir(parent, name), join(parent.path, name));
		} catch (err) {
			throw new Error(`${join(parent.path, name)} changed while this upload made it (${shown(err, parent)})`);
		}
		place.missing.shift();
		if (place.made.at(-1)?.parent !== parent) closeSync(parent.fd);
	}
}

/** Removes the directories `make` created, deepest first, as long as they are empty. */
export function unmake(place: Place): void {
	try {
		for (const { parent, name } of [...place.made].reverse()) rmdirSync(inDir(parent, name));
	} catch {
		// The directory holds other files now.
	}
}

/** Closes every directory the place holds. */
export function release(place: Place): void {
	for (const fd of new Set([place.dir.fd, ...place.made.map(m => m.parent.fd)])) closeSync(fd);
	place.made = [];
}
