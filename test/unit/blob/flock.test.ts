/**
 * The cross-process level of the upload lock (blob/flock.ts): flock(2) through bun:ffi, polled and bounded,
 * honoured against `flock(1)` (another process), and the branch where it cannot be loaded (non-Linux, no
 * libc): per process only, said once. The route's POST and PUT under a lock held by another process.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	closeSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { CrossLocks, type Libc, LOCK_WAIT_MS, loadFlock } from "../../../src/blob/flock.ts";
import { FileLocks } from "../../../src/blob/locks.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";
import { waitFor } from "../../helpers/wait.ts";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "blob-flock-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `flock(1)` in another process holds `file`'s lock until the returned stop (or `seconds`). */
async function holdElsewhere(file: string, seconds = 30) {
	// The shell takes the lock on fd 9 and becomes `sleep`, so killing that one pid frees the lock.
	const script = `exec 9>>"$1"; flock -x 9; echo held; exec sleep ${seconds}`;
	const proc = Bun.spawn(["bash", "-c", script, "bash", file], { stdout: "pipe" });
	const reader = proc.stdout.getReader();
	const first = await reader.read();
	expect(new TextDecoder().decode(first.value)).toBe("held\n");
	return {
		stop: async () => {
			proc.kill();
			await proc.exited;
		},
	};
}

/** A libc that answers flock with the given results in turn, and errno with the matching codes. */
function fakeLibc(results: Array<[number, number]>): Libc & { calls: number } {
	let last = 0;
	const lib = {
		calls: 0,
		flock: () => {
			const [ret, errno] = results[Math.min(lib.calls++, results.length - 1)] as [number, number];
			last = errno;
			return ret;
		},
		errno: () => last,
	};
	return lib;
}

describe("loadFlock", () => {
	test("Linux: libc's flock loads", () => {
		const got = loadFlock();
		expect(got.ok).toBe(process.platform === "linux");
	});

	test("not Linux, or no libc loads: why, naming the platform or each library tried", () => {
		expect(loadFlock("darwin")).toEqual({ ok: false, why: "flock(2) is loaded on Linux only, this is darwin" });
		const tried: string[] = [];
		const got = loadFlock("linux", name => {
			tried.push(name);
			throw new Error(`${name}: cannot open shared object file`);
		});
		expect(got.ok).toBe(false);
		expect(tried[0]).toBe("libc.so.6");
		expect(tried[1]).toMatch(/^libc\.musl-.+\.so\.1$/);
		if (!got.ok) for (const n of tried) expect(got.why).toContain(n);
	});
});

describe("CrossLocks", () => {
	const logs: string[] = [];
	const log = (l: string) => logs.push(l);
	beforeEach(() => {
		logs.length = 0;
	});

	test("degraded (flock not loadable): every take is 'unlocked', said once on the log, never waits", async () => {
		const across = new CrossLocks(() => loadFlock("darwin"));
		const file = join(dir, "f");
		writeFileSync(file, "");
		const a = openSync(file, "r");
		const b = openSync(file, "r");
		const t0 = performance.now();
		const [x, y] = [await across.take(a, log), await across.take(b, log)];
		expect(performance.now() - t0).toBeLessThan(100);
		expect([x.kind, y.kind]).toEqual(["unlocked", "unlocked"]);
		expect(logs).toEqual([
			"a2a-bridge: /blob: flock(2) is loaded on Linux only, this is darwin; uploads are locked within this process only",
		]);
		closeSync(a);
		closeSync(b);
	});

	test("two open files of one file: the second waits its bound, then busy; after release it is taken", async () => {
		const across = new CrossLocks();
		const file = join(dir, "f");
		writeFileSync(file, "");
		const a = openSync(file, "a");
		const b = openSync(file, "a");
		const first = await across.take(a, log);
		expect(first.kind).toBe("held");
		const t0 = performance.now();
		expect((await across.take(b, log, 150)).kind).toBe("busy");
		const waited = performance.now() - t0;
		expect(waited).toBeGreaterThanOrEqual(140);
		expect(waited).toBeLessThan(1500);
		if (first.kind === "held") first.release();
		const second = await across.take(b, log, 150);
		expect(second.kind).toBe("held");
		closeSync(a);
		closeSync(b);
		expect(logs).toEqual([]);
	});

	test("a lock held by another process (flock(1)) is honoured; freed meanwhile, the wait ends with it", async () => {
		const file = join(dir, "f");
		writeFileSync(file, "");
		const across = new CrossLocks();
		const fd = openSync(file, "a");
		const other = await holdElsewhere(file);
		expect((await across.take(fd, log, 100)).kind).toBe("busy");
		setTimeout(() => void other.stop(), 200);
		const t0 = performance.now();
		const got = await across.take(fd, log, 5000);
		expect(got.kind).toBe("held");
		expect(performance.now() - t0).toBeLessThan(3000);
		closeSync(fd);
	});

	test("errno: EINTR is retried, a file system without locks is 'unlocked', anything else 'failed'", async () => {
		const fd = 0;
		const retried = fakeLibc([
			[-1, 4],
			[0, 0],
		]);
		expect((await new CrossLocks(() => ({ ok: true, libc: retried })).take(fd, log)).kind).toBe("held");
		expect(retried.calls).toBe(2);
		const none = await new CrossLocks(() => ({ ok: true, libc: fakeLibc([[-1, 95]]) })).take(fd, log);
		expect(none).toEqual({ kind: "unlocked", why: "flock(2) failed: EOPNOTSUPP (the file system keeps no locks)" });
		expect(logs).toHaveLength(1);
		const failed = await new CrossLocks(() => ({ ok: true, libc: fakeLibc([[-1, 37]]) })).take(fd, log);
		expect(failed).toEqual({ kind: "failed", why: "flock(2) failed: ENOLCK" });
	});
});

describe("the route under another process's lock (flock(1))", () => {
	const audits: AuditRecord[] = [];
	const logs: string[] = [];
	const route = (locks?: FileLocks) =>
		createBlobRoute(
			{
				home: () => dir,
				cwd: () => dir,
				audit: r => audits.push(r),
				log: l => logs.push(l),
				config: () => ({ blob: "write" }),
			},
			locks,
		);
	const call = (r: ReturnType<typeof route>, method: string, path: string, body: string, extra = "") =>
		r.handle(
			new Request(`http://127.0.0.1:9/blob?path=${encodeURIComponent(path)}${extra}`, { method, body }),
			routeCtx({ sid: "sid-1" }),
		);
	beforeEach(() => {
		audits.length = 0;
		logs.length = 0;
	});

	test("POST and PUT: 409 upload_in_progress at once, before any byte; the file is byte-identical; audited", async () => {
		const file = join(dir, "held.log");
		writeFileSync(file, "before\n");
		const other = await holdElsewhere(file);
		try {
			const r = route();
			const t0 = performance.now();
			const posted = await call(r, "POST", file, "appended\n");
			expect(posted.status).toBe(409);
			expect(await posted.json()).toMatchObject({
				code: "upload_in_progress",
				error: `an upload to ${file} is in progress in another process (it holds the file's lock)`,
			});
			const put = await call(r, "PUT", file, "replaced\n");
			expect(put.status).toBe(409);
			expect(await put.json()).toMatchObject({ code: "upload_in_progress" });
			expect(performance.now() - t0).toBeLessThan(LOCK_WAIT_MS);
			expect(readFileSync(file, "utf8")).toBe("before\n");
			expect(readdirSync(dir).filter(n => n.startsWith(".a2a-staging-"))).toEqual([]);
			expect(audits.map(a => [a.tool, a.isError])).toEqual([
				["blob:write", true],
				["blob:write", true],
			]);
		} finally {
			await other.stop();
		}
		// Released: the same POST appends.
		const res = await call(route(), "POST", file, "appended\n", "&offset=7");
		expect(res.status).toBe(200);
		expect(readFileSync(file, "utf8")).toBe("before\nappended\n");
	}, 20_000);

	test("a file replaced between a POST's open and its lock is opened again: the bytes go to the file the path names", async () => {
		const file = join(dir, "swapped.log");
		writeFileSync(file, "");
		// The moment between open and lock, taken by a rename as another bridge's PUT would do it.
		const across = new CrossLocks();
		const tryTake = across.tryTake.bind(across);
		let swapped = false;
		across.tryTake = (fd, log) => {
			if (!swapped) {
				swapped = true;
				writeFileSync(join(dir, "new"), "");
				renameSync(join(dir, "new"), file);
			}
			return tryTake(fd, log);
		};
		const res = await call(route(new FileLocks(across)), "POST", file, "landed\n");
		expect(res.status).toBe(200);
		expect(readFileSync(file, "utf8")).toBe("landed\n");
	});

	test("degraded (no flock): the POST runs under this process's lock only, and the host log says so once", async () => {
		const file = join(dir, "unlocked.log");
		writeFileSync(file, "before\n");
		const other = await holdElsewhere(file);
		try {
			const r = route(new FileLocks(new CrossLocks(() => loadFlock("darwin"))));
			for (const [at, text] of [
				[7, "one\n"],
				[11, "two\n"],
			] as const) {
				const res = await call(r, "POST", file, text, `&offset=${at}`);
				expect(res.status).toBe(200);
			}
			expect(readFileSync(file, "utf8")).toBe("before\none\ntwo\n");
			expect(logs).toEqual([
				"a2a-bridge: /blob: flock(2) is loaded on Linux only, this is darwin; uploads are locked within this process only",
			]);
			// The first level still holds within the process.
			let push: ReadableStreamDefaultController<Uint8Array> | undefined;
			const slow = new ReadableStream<Uint8Array>({
				start: c => {
					push = c;
					c.enqueue(new TextEncoder().encode("x"));
				},
			});
			const first = r.handle(
				new Request(`http://127.0.0.1:9/blob?path=${encodeURIComponent(file)}&offset=15`, {
					method: "POST",
					body: slow,
				}),
				routeCtx({ sid: "sid-1" }),
			);
			await waitFor("the first POST's byte", () => readFileSync(file, "utf8").length === 16);
			const second = await call(r, "POST", file, "y", "&offset=16");
			expect(second.status).toBe(409);
			expect(await second.json()).toMatchObject({ code: "upload_in_progress" });
			push?.close();
			expect((await first).status).toBe(200);
		} finally {
			await other.stop();
		}
	}, 20_000);
});
