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
import {
	observePid,
	publishRuntime,
	type RuntimeInfo,
	readRuntime,
	removeRuntime,
	runtimePath,
	trustEntry,
	validateRuntime,
	writeRuntime,
} from "../../../src/config/runtime.ts";

const INFO: RuntimeInfo = {
	url: "http://127.0.0.1:41234/",
	port: 41234,
	pid: process.pid,
	started: "2026-01-01T00:00:00Z",
};

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

describe("write, read, remove", () => {
	test("written 0600 as JSON without a token, read back as written", () => {
		writeRuntime(path, INFO);
		expect(statSync(path).mode & 0o777).toBe(0o600);
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(INFO);
		expect(readRuntime(path)).toEqual({ kind: "ok", info: INFO });
	});

	test("an absent file is reported as absent", () => {
		expect(readRuntime(path)).toEqual({ kind: "absent" });
	});

	test("removed only while it still names this listener", () => {
		writeRuntime(path, { ...INFO, port: 5555, url: "http://127.0.0.1:5555/" });
		expect(removeRuntime(path, INFO)).toBe(false);
		expect(existsSync(path)).toBe(true);
		writeRuntime(path, { ...INFO, pid: INFO.pid + 1 });
		expect(removeRuntime(path, INFO)).toBe(false);
		writeRuntime(path, INFO);
		expect(removeRuntime(path, INFO)).toBe(true);
		expect(existsSync(path)).toBe(false);
		expect(removeRuntime(path, INFO)).toBe(false);
	});

	test("publishRuntime writes this process's file and its remover deletes it", () => {
		const config = join(dir, "a2a-bridge.json");
		const unpublish = publishRuntime(config, "http://127.0.0.1:8765/", 8765, () => {});
		expect(readRuntime(path)).toMatchObject({ kind: "ok", info: { port: 8765, pid: process.pid } });
		unpublish();
		expect(existsSync(path)).toBe(false);
	});

	test("publishRuntime reports a write failure and does not throw", () => {
		const lines: string[] = [];
		writeFileSync(join(dir, "not-a-dir"), "");
		const unpublish = publishRuntime(join(dir, "not-a-dir", "a2a-bridge.json"), INFO.url, INFO.port, l =>
			lines.push(l),
		);
		expect(lines.join("\n")).toContain("not written");
		unpublish();
	});

	test("observePid: this process is mine with its /proc start time; a pid past the kernel's limit is gone", () => {
		const me = observePid(process.pid);
		expect(me.kind).toBe("mine");
		const start = me.kind === "mine" ? (me.start ?? 0) : 0;
		// Started before this test ran, and not long before the test file was loaded.
		expect(start).toBeLessThanOrEqual(Date.now());
		expect(start).toBeGreaterThan(Date.now() - 3_600_000);
		expect(observePid(process.pid)).toEqual(me);
		expect(observePid(2 ** 22 + 1)).toEqual({ kind: "gone" });
	});

	test("publishRuntime records this process's start, and trustEntry accepts it", () => {
		const config = join(dir, "a2a-bridge.json");
		publishRuntime(config, INFO.url, INFO.port, () => {});
		const read = readRuntime(runtimePath(config));
		expect(read.kind).toBe("ok");
		if (read.kind !== "ok") return;
		expect(trustEntry(read.info, observePid(read.info.pid))).toEqual({ ok: true });
	});

	test("trustEntry (issue 20 item 7): exited, another user's, a reused pid, or no start time -> not trusted", () => {
		const entry = { pid: 4242, start: 1_700_000_000_000 };
		const cases: Array<[Parameters<typeof trustEntry>[1], Partial<typeof entry>, RegExp]> = [
			[{ kind: "gone" }, {}, /names pid 4242, which has exited/],
			[{ kind: "other_user" }, {}, /another user's process/],
			[{ kind: "mine", start: entry.start + 10 }, {}, /started at another time \(a reused pid\)/],
			[{ kind: "mine", start: entry.start }, { start: undefined }, /without its start time/],
			[{ kind: "mine", start: undefined }, {}, /whose start time this system does not show/],
		];
		for (const [facts, change, why] of cases) {
			const r = trustEntry({ ...entry, ...change }, facts);
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.why).toMatch(why);
		}
		expect(trustEntry(entry, { kind: "mine", start: entry.start })).toEqual({ ok: true });
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
		writeFileSync(path, `{"pad":"${"x".repeat(5000)}"}`, { mode: 0o600 });
		untrusted(/more than 4096/);
	});

	test("a hostile file is never removed by the clean stop", () => {
		writeFileSync(path, JSON.stringify(INFO), { mode: 0o644 });
		expect(removeRuntime(path, INFO)).toBe(false);
		expect(existsSync(path)).toBe(true);
	});

	const bad: Array<[string, unknown]> = [
		["an array", [INFO]],
		["null", null],
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
			expect(validateRuntime(value).ok).toBe(false);
			writeFileSync(path, JSON.stringify(value), { mode: 0o600 });
			expect(readRuntime(path).kind).toBe("untrusted");
		});
	}
});
