/**
 * The runtime record: where each running bridge says which URL it serves, so `npm run probe` and people need
 * not guess a port. It sits next to the config (`a2a-bridge.json` -> `a2a-bridge.runtime.json`) and holds
 * `{hosts: [{url, port, pid, started, cwd}]}`, one entry per live process (never a token). Every change is a
 * read-modify-write under a lock, so two hosts starting at once both stay listed; a stopping host removes
 * only its own entry, and entries of exited pids are dropped whenever the record is read. Readers trust it
 * only when it is a regular file of this user, mode 0600, well-formed, and an entry only when its pid is this
 * user's live process that started at the entry's `start` (contract §16): the probe sends the token to it.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { resolve, sep } from "node:path";
import { errorText } from "../text/error-text.ts";
import type { Parsed } from "./config.ts";
import { writeFileAtomic0600 } from "./disk.ts";
import { withLock } from "./lock.ts";
import { observePid } from "./pids.ts";

export interface RuntimeEntry {
	url: string;
	port: number;
	pid: number;
	/** When process `pid` started (ms since the epoch, from /proc); absent where /proc is not available. */
	start?: number;
	/** ISO time the bridge started listening. */
	started: string;
	/** The host's working directory, how `npm run probe` tells hosts apart. */
	cwd: string;
}

/** More bridges than this on one config is not a real setup; the oldest are dropped. */
const MAX_ENTRIES = 64;
/** A full record is about 64 entries of under 300 bytes; anything much larger is not ours. */
const MAX_BYTES = 64 * 1024;

export function runtimePath(configPath: string): string {
	return `${configPath.replace(/\.json$/, "")}.runtime.json`;
}

/** Validates one entry; the URL must be a plain `http://host:port/` matching `port`. */
function validateEntry(raw: unknown): Parsed<RuntimeEntry> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, why: "not a JSON object" };
	const { port, pid, url, started, cwd, start } = raw as Record<string, unknown>;
	if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
		return { ok: false, why: "field 'port' must be an integer in [1, 65535]" };
	if (typeof pid !== "number" || !Number.isInteger(pid) || pid < 1)
		return { ok: false, why: "field 'pid' must be a positive integer" };
	if (typeof started !== "string") return { ok: false, why: "field 'started' must be a string" };
	if (typeof cwd !== "string") return { ok: false, why: "field 'cwd' must be a string" };
	if (start !== undefined && (typeof start !== "number" || !Number.isInteger(start) || start < 0))
		return { ok: false, why: "field 'start' must be a non-negative integer (ms since the epoch)" };
	let parsed: URL | undefined;
	try {
		parsed = typeof url === "string" ? new URL(url) : undefined;
	} catch {}
	const plain =
		parsed?.protocol === "http:" &&
		!parsed.username &&
		!parsed.password &&
		parsed.pathname === "/" &&
		!parsed.search &&
		!parsed.hash &&
		parsed.port === String(port);
	if (!plain) return { ok: false, why: `field 'url' must be http://<host>:${port}/` };
	const when = start !== undefined ? { start } : {};
	return { ok: true, value: { url: url as string, port, pid, ...when, started, cwd } };
}

/** Validates the parsed record; one bad entry makes the whole record untrusted. @internal */
export function validateRuntime(raw: unknown): Parsed<RuntimeEntry[]> {
	const hosts = typeof raw === "object" && raw !== null ? (raw as { hosts?: unknown }).hosts : undefined;
	if (!Array.isArray(hosts)) return { ok: false, why: "field 'hosts' must be an array" };
	if (hosts.length > MAX_ENTRIES) return { ok: false, why: `holds more than ${MAX_ENTRIES} entries` };
	const out: RuntimeEntry[] = [];
	for (const [i, h] of hosts.entries()) {
		const e = validateEntry(h);
		if (!e.ok) return { ok: false, why: `hosts[${i}]: ${e.why}` };
		out.push(e.value);
	}
	return { ok: true, value: out };
}

const same = (a: RuntimeEntry, b: RuntimeEntry): boolean => a.pid === b.pid && a.started === b.started;

/** The record with `e` added (an older entry of the same pid replaced), at most MAX_ENTRIES, newest last. @internal */
export const withEntry = (entries: readonly RuntimeEntry[], e: RuntimeEntry): RuntimeEntry[] =>
	[...entries.filter(x => x.pid !== e.pid), e].slice(-MAX_ENTRIES);

/** The record without `e` (same pid and start time): another process's entry is never touched. @internal */
export const withoutEntry = (entries: readonly RuntimeEntry[], e: RuntimeEntry): RuntimeEntry[] =>
	entries.filter(x => !same(x, e));

export type HostPick =
	| { kind: "none" }
	| { kind: "one"; entry: RuntimeEntry }
	| { kind: "many"; entries: RuntimeEntry[] };

const within = (dir: string, cwd: string): boolean =>
	cwd === dir || cwd.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * The host for a directory: the only one, else the one serving `cwd`, else the one serving the closest
 * directory above it; several equally close (or none) -> `many`, for the caller to list.
 */
export function pickEntry(entries: readonly RuntimeEntry[], cwd: string): HostPick {
	if (entries.length === 0) return { kind: "none" };
	const [only] = entries;
	if (entries.length === 1 && only) return { kind: "one", entry: only };
	const here = resolve(cwd);
	const around = entries.filter(e => within(resolve(e.cwd), here));
	const deepest = Math.max(-1, ...around.map(e => resolve(e.cwd).length));
	const best = around.filter(e => resolve(e.cwd).length === deepest);
	const [first] = best;
	return best.length === 1 && first ? { kind: "one", entry: first } : { kind: "many", entries: [...entries] };
}

export type RuntimeRead =
	| { kind: "ok"; entries: RuntimeEntry[] }
	| { kind: "absent" }
	| { kind: "untrusted"; message: string };

/** Reads and checks the file without following a symlink at its path. */
export function readRuntime(path: string): RuntimeRead {
	let link: ReturnType<typeof lstatSync>;
	try {
		link = lstatSync(path);
	} catch {
		return { kind: "absent" };
	}
	const untrusted = (why: string): RuntimeRead => ({ kind: "untrusted", message: `${path}: ${why}; not used` });
	if (link.isSymbolicLink()) return untrusted("is a symlink");
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (err) {
		return untrusted(`cannot open (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
	}
	try {
		const st = fstatSync(fd);
		if (!st.isFile()) return untrusted("is not a regular file");
		if (typeof process.getuid === "function" && st.uid !== process.getuid())
			return untrusted("belongs to another user");
		if ((st.mode & 0o077) !== 0) return untrusted(`has mode ${(st.mode & 0o777).toString(8)}, not 600`);
		if (st.size > MAX_BYTES) return untrusted(`is ${st.size} bytes, more than ${MAX_BYTES}`);
		const buf = Buffer.alloc(MAX_BYTES);
		const n = readSync(fd, buf, 0, MAX_BYTES, 0);
		let raw: unknown;
		try {
			raw = JSON.parse(buf.subarray(0, n).toString("utf8"));
		} catch {
			return untrusted("is not valid JSON");
		}
		const checked = validateRuntime(raw);
		return checked.ok ? { kind: "ok", entries: checked.value } : untrusted(checked.why);
	} finally {
		closeSync(fd);
	}
}

/**
 * Whether an entry's process still runs as this user's, and (where both start times are known) is the same
 * process: what the record keeps. The probe asks more before it sends a token (`trustEntry`).
 */
function entryAlive(e: RuntimeEntry): boolean {
	const facts = observePid(e.pid);
	return facts.kind === "mine" && (e.start === undefined || facts.start === undefined || facts.start === e.start);
}

/** The live bridges on this config besides this process (`/a2a` names them). */
export function otherLiveBridges(configPath: string): RuntimeEntry[] {
	const r = readLiveRuntime(runtimePath(configPath));
	return r.kind === "ok" ? r.entries.filter(e => e.pid !== process.pid) : [];
}

/** The record's entries of live processes only. */
export function readLiveRuntime(path: string, alive: (e: RuntimeEntry) => boolean = entryAlive): RuntimeRead {
	const r = readRuntime(path);
	return r.kind === "ok" ? { kind: "ok", entries: r.entries.filter(alive) } : r;
}

/**
 * Applies `change` to the live entries under the record's lock and writes the result (an empty record
 * removes the file). A record that is not trusted is replaced: its content never reaches a reader anyway.
 * @internal
 */
export function updateRuntime(
	path: string,
	change: (entries: RuntimeEntry[]) => RuntimeEntry[],
	note: (line: string) => void = () => {},
): void {
	withLock(
		path,
		() => {
			const r = readLiveRuntime(path);
			const next = change(r.kind === "ok" ? r.entries : []);
			if (next.length > 0) {
				writeFileAtomic0600(path, `${JSON.stringify({ hosts: next }, null, "\t")}\n`);
				return;
			}
			try {
				unlinkSync(path);
			} catch {}
		},
		note,
	);
}

/**
 * The bridge's hook: adds this process's entry for a listener that just started and returns its removal
 * for the clean stop. A failure to write is reported and never stops the bridge.
 */
export function publishRuntime(
	configPath: string,
	where: { url: string; port: number; cwd: string },
	log: (line: string) => void,
): () => void {
	const path = runtimePath(configPath);
	const seen = observePid(process.pid);
	const start = seen.kind === "mine" && seen.start !== undefined ? { start: seen.start } : {};
	const entry: RuntimeEntry = { ...where, pid: process.pid, ...start, started: new Date().toISOString() };
	const failed = (what: string, err: unknown) => log(`A2A bridge: runtime file ${path}: ${what}: ${errorText(err)}`);
	const note = (line: string) => log(`A2A bridge: ${line}`);
	try {
		updateRuntime(path, entries => withEntry(entries, entry), note);
	} catch (err) {
		failed("entry not written", err);
		return () => {};
	}
	return () => {
		try {
			updateRuntime(path, entries => withoutEntry(entries, entry), note);
		} catch (err) {
			failed("entry not removed", err);
		}
	};
}
