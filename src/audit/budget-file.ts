/**
 * The buckets every bridge on one audit path shares (contract §19): `<log>.budget`, one line per busy token,
 * read and rewritten whole under an flock on itself, so two bridges (a TUI and `npm run host`) never give one
 * token two budgets. A file that cannot be used leaves this process its own buckets, said once.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, writeSync } from "node:fs";
import { reason } from "../config/disk.ts";
import { type Bucket, type BucketStore, MAX_BUCKETS, memoryStore } from "./budget.ts";
import type { RotationLock } from "./rotate.ts";

/** Longest line read back: a token name (bounded by the config) percent-encoded, a level and a time. */
const MAX_LINE_BYTES = 1024;
const MAX_FILE_BYTES = MAX_BUCKETS * MAX_LINE_BYTES;
/** How long one budget step waits for another bridge's; past it a call is refused, a charge owed. */
const LOCK_WAIT_MS = 50;
const sleepSync = (ms: number): void => {
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** The file's lines as buckets (pure): a line that does not parse is skipped, levels held within ±burst. @internal */
export function parseBuckets(text: string, burst: number): Map<string, Bucket> {
	const m = new Map<string, Bucket>();
	for (const line of text.split("\n")) {
		const [name, level, at, extra] = line.split(" ");
		if (name === undefined || extra !== undefined || m.size >= MAX_BUCKETS) continue;
		const l = Number(level);
		const t = Number(at);
		if (level === "" || at === "" || !Number.isFinite(l) || !Number.isFinite(t)) continue;
		let token: string;
		try {
			token = decodeURIComponent(name);
		} catch {
			continue;
		}
		m.delete(token);
		m.set(token, { level: Math.max(-burst, Math.min(burst, l)), at: t });
	}
	return m;
}

const bucketsText = (m: Map<string, Bucket>): string =>
	[...m].map(([token, b]) => `${encodeURIComponent(token)} ${b.level} ${b.at}\n`).join("");

/** The shared budget file of the log at `auditPath`. */
export const budgetPath = (auditPath: string): string => `${auditPath}.budget`;

/** The shared store of `<auditPath>.budget`; `lock` is the flock rotation takes (none: unlocked, same process). */
export function budgetFile(
	auditPath: string,
	burst: number,
	lock: RotationLock | undefined,
	log: (line: string) => void,
): BucketStore {
	const path = budgetPath(auditPath);
	const own = memoryStore();
	const told = new Set<string>();
	const say = (why: string): void => {
		if (told.has(why)) return;
		told.add(why);
		log(`a2a-bridge: audit budget file ${path} ${why}; this bridge keeps its own budgets meanwhile`);
	};
	return {
		run<T>(fn: (m: Map<string, Bucket>) => T): T | undefined {
			let fd: number;
			try {
				const flags = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
				fd = openSync(path, flags, 0o600);
			} catch (err) {
				// A missing directory is the log's own failure, said by its writer; anything else is said here.
				if ((err as NodeJS.ErrnoException).code !== "ENOENT") say(`cannot be opened (${reason(err)})`);
				return own.run(fn);
			}
			try {
				if (!fstatSync(fd).isFile()) {
					say("is not a regular file (remove it)");
					return own.run(fn);
				}
				const got = lock === undefined ? undefined : held(lock, fd);
				if (got?.kind === "busy") return undefined;
				try {
					const before = read(fd);
					const m = parseBuckets(before, burst);
					const out = fn(m);
					const after = bucketsText(m);
					if (after !== before) {
						const data = Buffer.from(after);
						writeSync(fd, data, 0, data.length, 0);
						ftruncateSync(fd, data.length);
					}
					return out;
				} finally {
					if (got?.kind === "held") got.release();
				}
			} catch (err) {
				say(`cannot be read or written (${reason(err)})`);
				return own.run(fn);
			} finally {
				closeSync(fd);
			}
		},
	};
}

/** The lock, polled for at most LOCK_WAIT_MS; a lock that cannot be had here leaves the step unlocked. */
function held(lock: RotationLock, fd: number): ReturnType<RotationLock> {
	const until = performance.now() + LOCK_WAIT_MS;
	let got = lock(fd);
	while (got.kind === "busy" && performance.now() < until) {
		sleepSync(1);
		got = lock(fd);
	}
	return got;
}

function read(fd: number): string {
	const size = Math.min(fstatSync(fd).size, MAX_FILE_BYTES);
	const buf = Buffer.alloc(size);
	let at = 0;
	while (at < size) {
		const n = readSync(fd, buf, at, size - at, at);
		if (n === 0) break;
		at += n;
	}
	return buf.subarray(0, at).toString("utf8");
}
