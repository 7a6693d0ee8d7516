/**
 * What this system says about a process id, from signals and /proc: gone, another user's, or this user's
 * with its start time; and whether a record naming a pid and start time may be trusted with a token (a
 * reused pid is another process). Linux gives start times; elsewhere they are unknown, never guessed.
 */
import { readFileSync, statSync } from "node:fs";

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

/** The facts of `pid` now: a signal probe, then the owner of /proc/<pid> and its start time. */
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
	entry: { pid: number; start?: number | undefined },
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
