/**
 * The runtime file: where a running bridge says which URL it serves, so `npm run probe` and people need
 * not guess a random port. It sits next to the config (`a2a-bridge.json` -> `a2a-bridge.runtime.json`),
 * holds `{url, port, pid, start, started}` (never the token), is written 0600 atomically at start and
 * removed on a clean stop only while it still names this process. Readers trust it only when it is a
 * regular file of this user, mode 0600, well-formed, and its pid is this user's live process that started
 * at `start` (contract §16): the probe sends the token to the URL it names.
 */
import {
	closeSync,
	constants,
	fstatSync,
	lstatSync,
	openSync,
	readFileSync,
	readSync,
	statSync,
	unlinkSync,
} from "node:fs";
import { errorText } from "../text/error-text.ts";
import type { Parsed } from "./config.ts";
import { writeFileAtomic0600 } from "./file.ts";

export interface RuntimeInfo {
	url: string;
	port: number;
	pid: number;
	/** When process `pid` started (ms since the epoch, from /proc); absent where /proc is not available. */
	start?: number;
	/** ISO time the bridge started listening. */
	started: string;
}

/** A real file is under 200 bytes; anything much larger is not ours. */
const MAX_BYTES = 4096;

export function runtimePath(configPath: string): string {
	return `${configPath.replace(/\.json$/, "")}.runtime.json`;
}

/** Validates parsed JSON; the URL must be a plain `http://host:port/` matching `port`. @internal */
export function validateRuntime(raw: unknown): Parsed<RuntimeInfo> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, message: "not a JSON object" };
	const o = raw as Record<string, unknown>;
	const { port, pid, url, started } = o;
	if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
		return { ok: false, message: "field 'port' must be an integer in [1, 65535]" };
	if (typeof pid !== "number" || !Number.isInteger(pid) || pid < 1)
		return { ok: false, message: "field 'pid' must be a positive integer" };
	if (typeof started !== "string") return { ok: false, message: "field 'started' must be a string" };
	const { start } = o;
	if (start !== undefined && (typeof start !== "number" || !Number.isInteger(start) || start < 0))
		return { ok: false, message: "field 'start' must be a non-negative integer (ms since the epoch)" };
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
	if (!plain) return { ok: false, message: `field 'url' must be http://<host>:${port}/` };
	return { ok: true, value: { url: url as string, port, pid, ...(start !== undefined ? { start } : {}), started } };
}

export type RuntimeRead =
	| { kind: "ok"; info: RuntimeInfo }
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
		return checked.ok ? { kind: "ok", info: checked.value } : untrusted(checked.message);
	} finally {
		closeSync(fd);
	}
}

/** @internal */
export function writeRuntime(path: string, info: RuntimeInfo): void {
	writeFileAtomic0600(path, `${JSON.stringify(info, null, "\t")}\n`);
}

/** Removes the file only while it still names `info` (another process may have started since). @internal */
export function removeRuntime(path: string, info: RuntimeInfo): boolean {
	const now = readRuntime(path);
	if (now.kind !== "ok" || now.info.pid !== info.pid || now.info.url !== info.url) return false;
	try {
		unlinkSync(path);
		return true;
	} catch {
		return false;
	}
}

/**
 * The bridge's hook: writes the file for a listener that just started and returns its removal for
 * the clean stop. A failure to write is reported and never stops the bridge.
 */
export function publishRuntime(configPath: string, url: string, port: number, log: (line: string) => void): () => void {
	const path = runtimePath(configPath);
	const seen = observePid(process.pid);
	const start = seen.kind === "mine" ? seen.start : undefined;
	const info: RuntimeInfo = {
		url,
		port,
		pid: process.pid,
		...(start !== undefined ? { start } : {}),
		started: new Date().toISOString(),
	};
	try {
		writeRuntime(path, info);
	} catch (err) {
		log(`A2A bridge: runtime file ${path} not written: ${errorText(err)}`);
		return () => {};
	}
	return () => {
		removeRuntime(path, info);
	};
}

/** What the system says about a pid: gone, another user's, or this user's with its start time (when known). */
export type PidFacts = { kind: "gone" } | { kind: "other_user" } | { kind: "mine"; start: number | undefined };

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux ABI). */
const USER_HZ = 100;

/** A process's start in ms since the epoch: boot time + its start ticks; undefined without /proc. */
function procStart(pid: number): number | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		// Fields after "(comm)" start at field 3 (state); starttime is field 22. comm may hold spaces.
		const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
		const btime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
		return Number.isFinite(ticks) && Number.isFinite(btime) ? btime * 1000 + (ticks * 1000) / USER_HZ : undefined;
	} catch {
		return undefined;
	}
}

export function observePid(pid: number): PidFacts {
	try {
		process.kill(pid, 0);
	} catch (err) {
		return (err as NodeJS.ErrnoException).code === "EPERM" ? { kind: "other_user" } : { kind: "gone" };
	}
	// Signalling succeeds for root on anyone's process: the owner of /proc/<pid> says whose it is.
	try {
		if (typeof process.getuid === "function" && statSync(`/proc/${pid}`).uid !== process.getuid())
			return { kind: "other_user" };
	} catch {}
	return { kind: "mine", start: procStart(pid) };
}

/**
 * Whether one runtime entry may be trusted with the token (pure): its pid must be this user's live
 * process that started when the entry says. `why` is a sentence for the user.
 */
export function trustEntry(
	entry: Pick<RuntimeInfo, "pid" | "start">,
	facts: PidFacts,
): { ok: true } | { ok: false; why: string } {
	if (facts.kind === "gone") return { ok: false, why: `names pid ${entry.pid}, which has exited` };
	if (facts.kind === "other_user") return { ok: false, why: `names pid ${entry.pid}, another user's process` };
	if (entry.start === undefined)
		return { ok: false, why: `names pid ${entry.pid} without its start time, so it cannot be checked` };
	if (facts.start === undefined)
		return { ok: false, why: `names pid ${entry.pid}, whose start time this system does not show` };
	if (facts.start !== entry.start)
		return { ok: false, why: `names pid ${entry.pid}, a process that started at another time (a reused pid)` };
	return { ok: true };
}
