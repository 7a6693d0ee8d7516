/**
 * The second level of the one-upload-per-file lock (contract §19): an advisory `flock(2)` on the opened
 * file itself, so two bridge processes (or a bridge and a script using `flock(1)`) never write one file at
 * once, and no lock file appears in the user's directories. `flock` comes from libc through `bun:ffi` on
 * Linux; where it cannot be loaded, or a file system keeps no locks, uploads are locked per process only
 * (blob/locks.ts), said once on host stderr. Never blocking: LOCK_NB, and a PUT's wait is polled and bounded.
 */
import { dlopen, FFIType, read } from "bun:ffi";
import { arch } from "node:process";
import { errorText } from "../text/error-text.ts";

/** How long a PUT whose body is whole waits to replace a file another process holds before it is refused (409). */
export const LOCK_WAIT_MS = 2000;
const LOCK_POLL_MS = 20;

/** The refusal when another process holds the file (409 `upload_in_progress`). */
export const heldElsewhere = (path: string): string =>
	`an upload to ${path} is in progress in another process (it holds the file's lock)`;

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
/** Linux errno values (asm-generic): the held lock, a signal, and file systems that keep no locks. */
const EINTR = 4;
const EWOULDBLOCK = 11;
const NO_LOCKS = new Map([
	[22, "EINVAL"],
	[38, "ENOSYS"],
	[95, "EOPNOTSUPP"],
]);
/** A signal per try is a storm, not a reason to spin. */
const INTR_TRIES = 8;
const NAMED = new Map([[4, "EINTR"], [9, "EBADF"], [37, "ENOLCK"], [12, "ENOMEM"], ...NO_LOCKS]);

/** What the bridge calls in libc. @internal */
export interface Libc {
	flock(fd: number, op: number): number;
	/** errno right after the last call. */
	errno(): number;
}
export type FlockLoad = { ok: true; libc: Libc } | { ok: false; why: string };

/** The file's lock, taken or why not. */
export type CrossLock =
	/** Held until `release` (closing the descriptor releases it too). */
	| { kind: "held"; release(): void }
	/** Another open file (another process, or `flock(1)`) held it for the whole wait. */
	| { kind: "busy" }
	/** No lock can be taken here (no flock, or a file system without locks): per process only. */
	| { kind: "unlocked"; why: string }
	/** flock failed for another reason: the upload is refused rather than run unlocked. */
	| { kind: "failed"; why: string };

function openLibc(name: string): Libc {
	const lib = dlopen(name, {
		flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
		__errno_location: { args: [], returns: FFIType.ptr },
	});
	const { flock, __errno_location } = lib.symbols;
	return {
		flock: (fd, op) => flock(fd, op),
		errno: () => {
			const at = __errno_location();
			return at === null ? 0 : read.i32(at, 0);
		},
	};
}

const MUSL_ARCH: Record<string, string> = { x64: "x86_64", arm64: "aarch64" };

/** libc's flock on Linux (glibc, then musl); anywhere else, or when neither loads, why not. @internal */
export function loadFlock(platform: string = process.platform, open: (name: string) => Libc = openLibc): FlockLoad {
	if (platform !== "linux") return { ok: false, why: `flock(2) is loaded on Linux only, this is ${platform}` };
	const failures: string[] = [];
	for (const name of ["libc.so.6", `libc.musl-${MUSL_ARCH[arch] ?? arch}.so.1`]) {
		try {
			return { ok: true, libc: open(name) };
		} catch (err) {
			failures.push(`${name}: ${errorText(err)}`);
		}
	}
	return { ok: false, why: `cannot load flock(2) from libc (${failures.join("; ")})` };
}

/** Takes files' locks across processes; `loader` runs once, at the first lock. */
export class CrossLocks {
	#load: FlockLoad | undefined;
	readonly #loader: () => FlockLoad;
	readonly #told = new Set<string>();

	constructor(loader: () => FlockLoad = loadFlock) {
		this.#loader = loader;
	}

	/**
	 * One try at LOCK_EX on `fd`'s open file, without waiting: what an upload does before its body, which it
	 * must start to write before its handler first yields (blob/upload.ts). `log` hears once per reason that
	 * this process locks uploads only within itself.
	 */
	tryTake(fd: number, log: (line: string) => void): CrossLock {
		this.#load ??= this.#loader();
		if (!this.#load.ok) return this.#unlocked(this.#load.why, log);
		const { libc } = this.#load;
		let code = EINTR;
		for (let i = 0; i < INTR_TRIES && code === EINTR; i++) {
			if (libc.flock(fd, LOCK_EX | LOCK_NB) === 0) return { kind: "held", release: () => void libc.flock(fd, LOCK_UN) };
			code = libc.errno();
		}
		if (code === EWOULDBLOCK) return { kind: "busy" };
		const why = `flock(2) failed: ${NAMED.get(code) ?? `errno ${code}`}`;
		return NO_LOCKS.has(code)
			? this.#unlocked(`${why} (the file system keeps no locks)`, log)
			: { kind: "failed", why };
	}

	/** The same, tried again every LOCK_POLL_MS for at most `waitMs`: for a PUT's rename, after its body. */
	async take(fd: number, log: (line: string) => void, waitMs = LOCK_WAIT_MS): Promise<CrossLock> {
		const until = performance.now() + waitMs;
		for (;;) {
			const got = this.tryTake(fd, log);
			if (got.kind !== "busy" || performance.now() >= until) return got;
			await Bun.sleep(LOCK_POLL_MS);
		}
	}

	#unlocked(why: string, log: (line: string) => void): CrossLock {
		if (!this.#told.has(why)) {
			this.#told.add(why);
			log(`a2a-bridge: /blob: ${why}; uploads are locked within this process only`);
		}
		return { kind: "unlocked", why };
	}
}
