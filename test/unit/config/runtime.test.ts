import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic0600 } from "../../../src/config/disk.ts";
import { observePid, trustEntry } from "../../../src/config/pids.ts";
import {
	pickEntry,
	publishRuntime,
	type RuntimeEntry,
	readLiveRuntime,
	readRuntime,
	runtimePath,
	updateRuntime,
	validateRuntime,
	withEntry,
	withoutEntry,
} from "../../../src/config/runtime.ts";

const INFO: RuntimeEntry = {
	url: "http://127.0.0.1:41234/",
	port: 41234,
	pid: process.pid,
	started: "2026-01-01T00:00:00Z",
	cwd: "/home/u/project",
};
const entry = (pid: number, cwd: string, port = 40000 + (pid % 20000)): RuntimeEntry => ({
	url: `http://127.0.0.1:${port}/`,
	port,
	pid,
	started: `2026-01-01T00:00:0${pid % 10}Z`,
	cwd,
});
const writeRuntime = (p: string, entries: unknown): void =>
	writeFileAtomic0600(p, JSON.stringify({ hosts: Array.isArray(entries) ? entries : [entries] }));

let dir: string;
let path: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-runtime-"));
	path = join(dir, "a2a-bridge.runtime.json");
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

describe("runtimePath", () => {
	test("next to the config: .json replaced, any other name suffixed", () => {
		expect(runtimePath("/h/.omp/agent/a2a-bridge.json")).toBe("/h/.omp/agent/a2a-bridge.runtime.json");
		expect(runtimePath("/etc/bridge.conf")).toBe("/etc/bridge.conf.runtime.json");
	});
});

describe("the record's pure operations", () => {
	const a = entry(101, "/p/a");
	const b = entry(102, "/p/b");
	test("withEntry appends, replacing an older entry of the same pid; withoutEntry removes only the same pid and start", () => {
		expect(withEntry([a], b)).toEqual([a, b]);
		const restarted = { ...a, started: "later", port: 1, url: "http://127.0.0.1:1/" };
		expect(withEntry([a, b], restarted)).toEqual([b, restarted]);
		expect(withoutEntry([a, b], a)).toEqual([b]);
		expect(withoutEntry([a, b], { ...a, started: "other" })).toEqual([a, b]);
	});

	test("withEntry keeps at most 64 entries, dropping the oldest", () => {
		let list: RuntimeEntry[] = [];
		for (let i = 1; i <= 70; i++) list = withEntry(list, entry(i, `/p/${i}`));
		expect(list.length).toBe(64);
		expect(list[0]?.pid).toBe(7);
	});

	test("pickEntry: the only one; else the one for the directory or the closest above it; else many", () => {
		const root = entry(103, "/p");
		expect(pickEntry([], "/x")).toEqual({ kind: "none" });
		expect(pickEntry([a], "/elsewhere")).toEqual({ kind: "one", entry: a });
		expect(pickEntry([a, b], "/p/b")).toEqual({ kind: "one", entry: b });
		expect(pickEntry([a, b, root], "/p/b/src/deep")).toEqual({ kind: "one", entry: b });
		expect(pickEntry([a, b, root], "/p/c")).toEqual({ kind: "one", entry: root });
		expect(pickEntry([a, b], "/p/ab")).toEqual({ kind: "many", entries: [a, b] });
		expect(pickEntry([a, entry(104, "/p/a")], "/p/a")).toMatchObject({ kind: "many" });
	});
});

describe("write, read, remove", () => {
	test("written 0600 as JSON without a token, read back as written", () => {
		publishRuntime(join(dir, "a2a-bridge.json"), INFO, () => {});
		expect(statSync(path).mode & 0o777).toBe(0o600);
		const raw = JSON.parse(readFileSync(path, "utf8"));
		expect(raw.hosts).toMatchObject([{ url: INFO.url, port: INFO.port, pid: process.pid, cwd: INFO.cwd }]);
		expect(JSON.stringify(raw)).not.toMatch(/token/i);
		expect(readRuntime(path)).toEqual({ kind: "ok", entries: raw.hosts });
	});

	test("an absent file is reported as absent", () => {
		expect(readRuntime(path)).toEqual({ kind: "absent" });
	});

	test("two hosts: each stop removes only its own entry; the last one removes the file", () => {
		const config = join(dir, "a2a-bridge.json");
		const other = { ...entry(process.ppid, "/p/other"), started: "2026-01-01T00:00:00Z" };
		writeRuntime(path, other);
		const unpublish = publishRuntime(config, INFO, () => {});
		const both = readRuntime(path);
		expect(both.kind === "ok" ? both.entries.map(e => e.pid) : []).toEqual([process.ppid, process.pid]);
		unpublish();
		expect(readRuntime(path)).toEqual({ kind: "ok", entries: [other] });
		updateRuntime(path, list => withoutEntry(list, other));
		expect(existsSync(path)).toBe(false);
	});

	test("entries of exited pids are dropped when read, and by the next update", () => {
		const dead = entry(2 ** 22 + 5, "/p/dead");
		writeRuntime(path, [dead, { ...INFO }]);
		expect(readLiveRuntime(path)).toEqual({ kind: "ok", entries: [INFO] });
		expect(readLiveRuntime(path, () => false)).toEqual({ kind: "ok", entries: [] });
		updateRuntime(path, list => list);
		expect(JSON.parse(readFileSync(path, "utf8")).hosts).toEqual([INFO]);
	});

	test("concurrent starts lose no entry (8 processes publish at once)", async () => {
		const config = join(dir, "a2a-bridge.json");
		const script = join(dir, "pub.ts");
		const mod = join(import.meta.dir, "..", "..", "..", "src", "config", "runtime.ts");
		writeFileSync(
			script,
			`import { publishRuntime } from ${JSON.stringify(mod)};\n` +
				`publishRuntime(${JSON.stringify(config)}, { url: "http://127.0.0.1:" + (30000 + Number(process.argv[2])) + "/", port: 30000 + Number(process.argv[2]), cwd: "/p" }, l => { console.error(l); process.exit(3); });\n` +
				"await Bun.sleep(60_000);\n",
		);
		const procs = Array.from({ length: 8 }, (_, i) =>
			Bun.spawn([process.execPath, script, String(i)], { stdout: "ignore", stderr: "pipe" }),
		);
		let ports: number[] = [];
		// Each publisher stays alive until killed: an exited one's entry would rightly be dropped by the next.
		for (let i = 0; i < 400 && ports.length < 8; i++) {
			await Bun.sleep(50);
			const r = readRuntime(path);
			ports = r.kind === "ok" ? r.entries.map(e => e.port).sort() : [];
		}
		for (const p of procs) p.kill();
		await Promise.all(procs.map(p => p.exited));
		expect(ports).toEqual(Array.from({ length: 8 }, (_, i) => 30000 + i));
	}, 40_000);

	test("publishRuntime reports a write failure and does not throw", () => {
		const lines: string[] = [];
		writeFileSync(join(dir, "not-a-dir"), "");
		const unpublish = publishRuntime(join(dir, "not-a-dir", "a2a-bridge.json"), INFO, l => lines.push(l));
		expect(lines.join("\n")).toContain("not written");
		unpublish();
	});

	test("publishRuntime records this process's start, and trustEntry accepts it", () => {
		const config = join(dir, "a2a-bridge.json");
		publishRuntime(config, INFO, () => {});
		const read = readRuntime(runtimePath(config));
		expect(read.kind).toBe("ok");
		const [mine] = read.kind === "ok" ? read.entries : [];
		expect(mine?.start).toEqual(expect.any(Number));
		expect(trustEntry(mine ?? INFO, observePid(process.pid))).toEqual({ ok: true });
	});
});

describe("hostile runtime files are not trusted", () => {
	const untrusted = (why: RegExp) => {
		const r = readRuntime(path);
		expect(r.kind).toBe("untrusted");
		expect(r.kind === "untrusted" ? r.message : "").toMatch(why);
	};

	test("garbage bytes", () => {
		writeFileSync(path, "\u0000\xff{not json", { mode: 0o600 });
		untrusted(/not valid JSON/);
	});

	test("a symlink to a well-formed file", () => {
		const real = join(dir, "real.json");
		writeRuntime(real, INFO);
		symlinkSync(real, path);
		untrusted(/symlink/);
	});

	test("group- or world-accessible modes", () => {
		for (const m of [0o644, 0o620, 0o606, 0o660]) {
			writeRuntime(path, INFO);
			chmodSync(path, m);
			untrusted(new RegExp(`mode ${m.toString(8)}`));
		}
	});

	test("a directory or a fifo at the path", () => {
		mkdirSync(path);
		chmodSync(path, 0o700);
		untrusted(/not a regular file/);
		rmSync(path, { recursive: true });
		Bun.spawnSync(["mkfifo", "-m", "600", path]);
		untrusted(/not a regular file/);
	});

	test("an oversized file", () => {
		writeFileSync(path, `{"pad":"${"x".repeat(70_000)}"}`, { mode: 0o600 });
		untrusted(/more than 65536/);
	});

	test("issue 30: a directory at the record's lock -> the entry is still written, and the log says the lock was not used", () => {
		mkdirSync(`${path}.lock`);
		const lines: string[] = [];
		const config = join(dir, "a2a-bridge.json");
		const unpublish = publishRuntime(config, INFO, l => lines.push(l));
		expect(readRuntime(path).kind).toBe("ok");
		expect(lines).toEqual([
			`A2A bridge: ${path}.lock is a directory the bridge did not make (remove it); ${path} was changed without the lock`,
		]);
		unpublish();
		expect(readRuntime(path)).toEqual({ kind: "absent" });
	});

	test("a symlinked record is replaced by a regular file on the next update, its target untouched", () => {
		const real = join(dir, "real.json");
		writeFileSync(real, "keep", { mode: 0o600 });
		symlinkSync(real, path);
		updateRuntime(path, list => withEntry(list, INFO));
		expect(readFileSync(real, "utf8")).toBe("keep");
		expect(readRuntime(path)).toEqual({ kind: "ok", entries: [INFO] });
	});

	const bad: Array<[string, unknown]> = [
		["an array", [INFO]],
		["null", null],
		["the old one-host shape", INFO],
		["hosts not an array", { hosts: INFO }],
		["no cwd", { hosts: [{ ...INFO, cwd: undefined }] }],
		["port 0", { ...INFO, port: 0 }],
		["port as string", { ...INFO, port: "41234" }],
		["pid -1", { ...INFO, pid: -1 }],
		["no started", { url: INFO.url, port: INFO.port, pid: INFO.pid }],
		["https URL", { ...INFO, url: "https://127.0.0.1:41234/" }],
		["URL with credentials", { ...INFO, url: "http://u:p@127.0.0.1:41234/" }],
		["URL with a path", { ...INFO, url: "http://127.0.0.1:41234/steal?x" }],
		["URL port differs from port", { ...INFO, url: "http://127.0.0.1:1/" }],
		["URL not a URL", { ...INFO, url: "127.0.0.1:41234" }],
	];
	for (const [name, value] of bad) {
		test(`malformed content: ${name}`, () => {
			const wrapped =
				typeof value === "object" &&
				value !== null &&
				!Array.isArray(value) &&
				!("hosts" in value) &&
				"pid" in value &&
				name !== "the old one-host shape"
					? { hosts: [value] }
					: value;
			expect(validateRuntime(wrapped).ok).toBe(false);
			writeFileSync(path, JSON.stringify(wrapped), { mode: 0o600 });
			expect(readRuntime(path).kind).toBe("untrusted");
		});
	}
});
