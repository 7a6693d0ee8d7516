import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_MAX_BYTES, createAuditLog, defaultAuditPath } from "../../../src/audit/log.ts";
import { RECORD_MAX_BYTES, recordLine } from "../../../src/audit/record.ts";
import { REFUSAL_WINDOW_MS } from "../../../src/audit/refusals.ts";
import { AUDIT_GENERATIONS } from "../../../src/audit/rotate.ts";
import { mountTmpfs } from "../../helpers/tmpfs.ts";

const sha8 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex").slice(0, 8);
const FIXED_DATE = new Date("2025-01-02T03:04:05.678Z");
/** A line the log writes to stderr for each failed record (the 1st and every 100th). */
const notWritten = (line: string): boolean => line.includes("audit record not written to");
const SID = "11111111-2222-4333-8444-555555555555";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-audit-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

const readLines = (p: string): string[] =>
	existsSync(p)
		? readFileSync(p, "utf8")
				.split("\n")
				.filter(l => l !== "")
		: [];

describe("limits", () => {
	test("defaults -> 16 MiB files, 3 older generations", () => {
		expect(AUDIT_MAX_BYTES).toBe(16 * 1024 * 1024);
		expect(AUDIT_GENERATIONS).toBe(3);
	});
});

describe("defaultAuditPath", () => {
	test("A2A_BRIDGE_AUDIT set -> that path; unset -> ~/.omp/agent/a2a-bridge.log", () => {
		expect(defaultAuditPath({ A2A_BRIDGE_AUDIT: "/x/a.log" })).toBe("/x/a.log");
		expect(defaultAuditPath({})).toEndWith(join(".omp", "agent", "a2a-bridge.log"));
	});
});

describe("createAuditLog records", () => {
	test("first write -> file created at 0600", async () => {
		const p = join(dir, "audit.log");
		const log = createAuditLog({ path: p, log: () => {} });
		await log.calls.start({ id: "id-1", sid: SID, tool: "read", args: {} });
		expect(statSync(p).mode & 0o777).toBe(0o600);
	});

	test("start and done -> JSONL with fields in order ts,id,sid,phase,tool,(isError),args[,cancelled]", async () => {
		const p = join(dir, "audit.log");
		const log = createAuditLog({ path: p, log: () => {}, clock: { now: () => FIXED_DATE.getTime() } });
		await log.calls.start({ id: "id-1", sid: SID, tool: "bash", args: { command: "ls" } });
		await log.calls.done({ id: "id-1", sid: SID, tool: "bash", args: { command: "ls" }, isError: false });
		await log.calls.done({ id: "id-2", sid: SID, tool: "bash", args: {}, isError: true, cancelled: true });
		const text = readFileSync(p, "utf8");
		expect(text.endsWith("\n")).toBe(true);
		const lines = readLines(p);
		expect(lines.length).toBe(3);
		const [start, done, cancelled] = lines.map(l => JSON.parse(l) as Record<string, unknown>) as [
			Record<string, unknown>,
			Record<string, unknown>,
			Record<string, unknown>,
		];
		expect(Object.keys(start)).toEqual(["ts", "id", "sid", "phase", "tool", "args"]);
		expect(start).toEqual({
			ts: "2025-01-02T03:04:05.678Z",
			id: "id-1",
			sid: SID,
			phase: "start",
			tool: "bash",
			args: '{"command":"ls"}',
		});
		expect(Object.keys(done)).toEqual(["ts", "id", "sid", "phase", "tool", "isError", "args"]);
		expect(done).toMatchObject({ phase: "done", isError: false });
		expect(Object.keys(cancelled)).toEqual(["ts", "id", "sid", "phase", "tool", "isError", "args", "cancelled"]);
		expect(cancelled).toMatchObject({ phase: "done", isError: true, cancelled: true });
	});

	test("args -> stored as the redacted serialized string", async () => {
		const p = join(dir, "audit.log");
		const log = createAuditLog({ path: p, log: () => {} });
		const body = "y".repeat(300);
		await log.calls.start({ id: "i", sid: SID, tool: "edit", args: { edits: [{ body }] } });
		const rec = JSON.parse(readLines(p)[0] as string);
		expect(rec.args).toBe(JSON.stringify({ edits: [{ body: `<len:300,sha256:${sha8(body)}>` }] }));
		expect(readFileSync(p, "utf8")).not.toContain(body);
	});

	test("write with sid null and extra fields -> extras after args", () => {
		const p = join(dir, "audit.log");
		const log = createAuditLog({ path: p, log: () => {} });
		log.write({
			id: "b",
			sid: null,
			phase: "done",
			tool: "blob:write",
			args: { path: "/x" },
			isError: false,
			bytes: 5,
		});
		const rec = JSON.parse(readLines(p)[0] as string);
		expect(Object.keys(rec)).toEqual(["ts", "id", "sid", "phase", "tool", "isError", "args", "bytes"]);
		expect(rec.sid).toBeNull();
	});

	test("token getter -> the live token never reaches the file", async () => {
		const p = join(dir, "audit.log");
		let token = "tok_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"; // 43 chars
		const log = createAuditLog({ path: p, log: () => {}, secrets: () => token });
		await log.calls.start({ id: "i", sid: SID, tool: "bash", args: { command: `curl -H 'Bearer ${token}' x` } });
		const first = token;
		token = "tok_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
		await log.calls.done({
			id: "i",
			sid: SID,
			tool: "bash",
			args: { t: token, nested: [{ t: token }] },
			isError: false,
		});
		const text = readFileSync(p, "utf8");
		expect(text).not.toContain(first);
		expect(text).not.toContain(token);
		expect(text).toContain("<token>");
		expect(readLines(p).length).toBe(2);
	});

	test('issue 20 item 8: a secret with \\ and ", or cut by the 1 KiB args limit, leaves no whole, escaped or cut copy', async () => {
		const p = join(dir, "audit.log");
		const secret = 'q\\"uote\\back\\slash"-0123456789abcdefghijklmnopqrstuv';
		const log = createAuditLog({ path: p, log: () => {}, secrets: () => [secret] });
		// Placed so that the serialized args are cut in the middle of where the secret sits.
		for (let pad = 960; pad <= 1020; pad += 6) {
			const args = {
				a: "x".repeat(100),
				b: Array.from({ length: 9 }, () => "y".repeat(100)),
				c: `${"z".repeat(pad - 1000 + 60)}${secret}`,
			};
			await log.calls.start({ id: `i${pad}`, sid: SID, tool: "bash", args });
			await log.calls.start({
				id: `k${pad}`,
				sid: SID,
				tool: "bash",
				args: { [secret]: 1, s: secret, long: `${secret}${"w".repeat(200)}` },
			});
		}
		await log.calls.start({ id: "t", sid: SID, tool: secret, args: {} });
		const text = readFileSync(p, "utf8");
		const escaped = JSON.stringify(secret).slice(1, -1);
		// No run of 12 characters of the secret, raw or as JSON escapes it, anywhere in the file.
		for (const form of [secret, escaped])
			for (let i = 0; i + 12 <= form.length; i++) expect(text).not.toContain(form.slice(i, i + 12));
		expect(text).toContain("<token>");
	});
});

describe("createAuditLog rotation", () => {
	const record = (i: number) => ({ id: `id-${String(i).padStart(4, "0")}`, sid: SID, tool: "read", args: { i } });

	test("file would pass maxBytes -> rotated to .1 .2 .3, never a .4, each file within maxBytes", async () => {
		const p = join(dir, "audit.log");
		const maxBytes = 1000;
		const said: string[] = [];
		const log = createAuditLog({
			path: p,
			log: l => said.push(l),
			maxBytes,
			clock: { now: () => FIXED_DATE.getTime() },
		});
		for (let i = 0; i < 200; i++) await log.calls.start(record(i));
		for (const g of ["", ".1", ".2", ".3"]) {
			expect(existsSync(`${p}${g}`)).toBe(true);
			expect(statSync(`${p}${g}`).size).toBeLessThanOrEqual(maxBytes);
			expect(statSync(`${p}${g}`).mode & 0o777).toBe(0o600);
		}
		expect(existsSync(`${p}.4`)).toBe(false);
		// .3 oldest, .1 newest, live file newest of all; every line is whole JSON.
		const ids = (f: string) => readLines(f).map(l => JSON.parse(l).id as string);
		const [g3, g2, g1, live] = [ids(`${p}.3`), ids(`${p}.2`), ids(`${p}.1`), ids(p)];
		const ordered = [...g3, ...g2, ...g1, ...live];
		expect(ordered).toEqual([...ordered].sort());
		expect(live.at(-1)).toBe("id-0199");
		expect(said.filter(notWritten)).toEqual([]);
	});

	test("burst of 500 concurrent start+done pairs with room for 1000 records -> zero lost, every start has its done", async () => {
		const p = join(dir, "audit.log");
		const clock = { now: () => FIXED_DATE.getTime() };
		// Size one record of each phase with the same shapes the burst writes.
		const probe = join(dir, "probe.log");
		const sizer = createAuditLog({ path: probe, log: () => {}, clock });
		const sample = { id: crypto.randomUUID(), sid: SID, tool: "bash", args: { n: 9999 } };
		await sizer.calls.start(sample);
		await sizer.calls.done({ ...sample, isError: false });
		const lineBytes = Math.max(...readLines(probe).map(l => Buffer.byteLength(l) + 1));
		// 260 lines per file x 4 files >= 1000 records, and the burst still rotates three times.
		const maxBytes = 260 * lineBytes;
		const said: string[] = [];
		const log = createAuditLog({ path: p, log: l => said.push(l), maxBytes, clock });
		await Promise.all(
			Array.from({ length: 500 }, async (_, n) => {
				const c = { id: crypto.randomUUID(), sid: SID, tool: "bash", args: { n: 1000 + n } };
				await log.calls.start(c);
				await log.calls.done({ ...c, isError: n % 7 === 0 });
			}),
		);
		expect(existsSync(`${p}.3`)).toBe(true);
		expect(existsSync(`${p}.4`)).toBe(false);
		const records = [p, `${p}.1`, `${p}.2`, `${p}.3`].flatMap(readLines).map(l => JSON.parse(l));
		expect(records.length).toBe(1000);
		const starts = new Set(records.filter(r => r.phase === "start").map(r => r.id));
		const dones = new Set(records.filter(r => r.phase === "done").map(r => r.id));
		expect(starts.size).toBe(500);
		expect(dones).toEqual(starts);
		expect(said.filter(notWritten)).toEqual([]);
	});
});

describe("createAuditLog failures", () => {
	const failureLine = (path: string) => `audit record not written to ${path} (`;

	for (const [name, path] of [
		["path in a missing directory", () => join(dir, "missing", "dir", "audit.log")],
		["/dev/full (ENOSPC)", () => "/dev/full"],
	] as const) {
		// Without /dev/full the case shows as skipped, never as a pass that checked nothing.
		test.skipIf(name.startsWith("/dev/full") && !existsSync("/dev/full"))(
			`${name} -> never throws, logs on the 1st and 100th failure only`,
			async () => {
				const p = path();
				const lines: string[] = [];
				const log = createAuditLog({ path: p, log: l => lines.push(l) });
				await log.calls.start({ id: "1", sid: SID, tool: "read", args: {} }); // 1st
				expect(lines.length).toBe(1);
				expect(lines[0]).toContain(failureLine(p));
				await log.calls.done({ id: "1", sid: SID, tool: "read", args: {}, isError: false }); // 2nd
				expect(lines.length).toBe(1);
				for (let i = 3; i <= 99; i++) log.write({ id: `${i}`, sid: SID, phase: "start", tool: "read", args: {} });
				expect(lines.length).toBe(1);
				log.write({ id: "100", sid: SID, phase: "start", tool: "read", args: {} }); // 100th
				expect(lines.length).toBe(2);
				expect(lines[1]).toContain(failureLine(p));
				expect(lines[1]).toContain("100");
				expect(lines[1]).toContain("; 100 failed so far");
			},
		);
	}

	test("failed write -> line names the OS reason code, never the args", async () => {
		const p = join(dir, "missing", "audit.log");
		const lines: string[] = [];
		const log = createAuditLog({ path: p, log: l => lines.push(l) });
		await log.calls.start({ id: "1", sid: SID, tool: "read", args: { secret: "hunter2" } });
		expect(lines[0]).toContain("ENOENT");
		expect(lines[0]).not.toContain("hunter2");
	});
});

describe("createAuditLog caps (contract §15)", () => {
	test("a 2 MB tool name, a 6,000-char error, a long token name -> each hashed like a long args leaf; every record <= 8 KiB", async () => {
		const path = join(dir, "a.log");
		const log = createAuditLog({ path, log: () => {} });
		const tool = "t".repeat(2_000_000);
		const error = `cannot write /${"p".repeat(6000)}`;
		await log.calls.start({ id: "i1", sid: SID, tool, args: {} });
		log.write({
			id: "i2",
			sid: null,
			phase: "done",
			tool: "blob:write",
			isError: true,
			args: {},
			error,
			token: "n".repeat(200),
		});
		const lines = readLines(path);
		expect(lines).toHaveLength(2);
		for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(RECORD_MAX_BYTES);
		const [a, b] = lines.map(l => JSON.parse(l));
		expect(a.tool).toBe(`<len:2000000,sha256:${sha8(tool)}>`);
		expect(b.error).toBe(`<len:${error.length},sha256:${sha8(error)}>`);
		expect(b.token).toBe(`<len:200,sha256:${sha8("n".repeat(200))}>`);
	});

	test("three calls with 1.5 MB tool names -> earlier history stays in the live file (no rotation)", async () => {
		const path = join(dir, "a.log");
		const log = createAuditLog({ path, log: () => {} });
		await log.calls.start({ id: "first", sid: SID, tool: "read", args: { marker: "history" } });
		for (let i = 0; i < 3; i++)
			await log.calls.start({ id: `big${i}`, sid: SID, tool: "x".repeat(1_500_000), args: {} });
		expect(existsSync(`${path}.1`)).toBe(false);
		expect(readFileSync(path, "utf8")).toContain("history");
	});

	test("a record still over 8 KiB after the caps -> fixed fields and an args digest, flagged oversized", () => {
		const at = new Date(0);
		const extras = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, "v".repeat(100)]));
		const line = recordLine(
			{ id: "i", sid: null, phase: "done", tool: "t", isError: true, args: { a: 1 }, ...extras },
			at,
		);
		expect(Buffer.byteLength(line)).toBeLessThanOrEqual(RECORD_MAX_BYTES);
		const rec = JSON.parse(line);
		expect(rec).toMatchObject({ id: "i", tool: "t", isError: true, oversized: true });
		expect(rec.args).toMatch(/^<len:\d+,sha256:[0-9a-f]{8}>$/);
	});

	test('`{"__proto__": …}` in args -> kept as data in the record', async () => {
		const path = join(dir, "a.log");
		const log = createAuditLog({ path, log: () => {} });
		const args = JSON.parse('{"__proto__": {"command": "rm -rf /"}, "x": 1}');
		await log.calls.start({ id: "p", sid: SID, tool: "bash", args });
		const rec = JSON.parse(readLines(path)[0] ?? "{}");
		expect(rec.args).toBe('{"__proto__":{"command":"rm -rf /"},"x":1}');
	});
});

describe("refusals coalesced per token (contract §16, issue 20 item 5)", () => {
	test("2,000 refused calls in one second -> 2 records; every earlier record stays in the file, nothing rotated", async () => {
		const p = join(dir, "audit.log");
		let t = FIXED_DATE.getTime();
		const log = createAuditLog({ path: p, log: () => {}, maxBytes: 64 * 1024, clock: { now: () => t } });
		for (let i = 0; i < 20; i++) {
			await log.calls.start({ id: `real-${i}`, sid: SID, tool: "read", args: { path: `/f${i}` }, tokenName: "ci" });
			await log.calls.done({
				id: `real-${i}`,
				sid: SID,
				tool: "read",
				args: { path: `/f${i}` },
				tokenName: "ci",
				isError: false,
			});
		}
		const before = readLines(p);
		const big = { pad: Array.from({ length: 8 }, (_, i) => `${i}`.repeat(110)) };
		for (let i = 0; i < 2000; i++) {
			log.calls.refused({
				id: `r${i}`,
				sid: SID,
				tokenName: "ci",
				client: "flood",
				tool: `nope-${i % 3}`,
				args: big,
				reason: "not exposed",
			});
			if (i === 999) t += 10; // still inside the window
		}
		await log.close();
		const lines = readLines(p);
		expect(lines.slice(0, before.length)).toEqual(before);
		expect(existsSync(`${p}.1`)).toBe(false);
		const refused = lines.slice(before.length).map(l => JSON.parse(l));
		expect(refused.length).toBe(2);
		expect(refused[0]).toMatchObject({
			phase: "refused",
			id: "r0",
			token: "ci",
			client: "flood",
			tool: "nope-0",
			count: 1,
		});
		expect(refused[1]).toMatchObject({
			phase: "refused",
			token: "ci",
			count: 1999,
			tools: ["nope-1", "nope-2", "nope-0"],
		});
	});

	test("each token has its own window; a refusal after the window opens a new one", async () => {
		const p = join(dir, "audit.log");
		let t = FIXED_DATE.getTime();
		const log = createAuditLog({ path: p, log: () => {}, clock: { now: () => t } });
		const r = (tokenName: string, id: string) =>
			log.calls.refused({ id, sid: null, tokenName, tool: "x", args: {}, reason: "not exposed" });
		r("a", "a1");
		r("b", "b1");
		r("a", "a2");
		t += REFUSAL_WINDOW_MS;
		r("a", "a3");
		await log.close();
		const recs = readLines(p).map(l => JSON.parse(l));
		expect(recs.map(x => [x.token, x.count, x.id.length > 3 ? "summary" : x.id])).toEqual([
			["a", 1, "a1"],
			["b", 1, "b1"],
			["a", 1, "summary"],
			["a", 1, "a3"],
		]);
	});
});

describe("issue 30: whole records on a full disk (defect 8), planted generations (defect 2)", () => {
	/** A record of about 6 KiB: 48 extra fields of 120 characters (kept, not hashed), under the 8 KiB cap. */
	const big = (id: string) => ({
		id,
		sid: SID,
		phase: "start" as const,
		tool: "bash",
		args: {},
		...Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`f${i}`, "x".repeat(120)])),
	});
	const parsed = (p: string) =>
		readFileSync(p, "utf8")
			.split("\n")
			.slice(0, -1)
			.map(l => JSON.parse(l) as { id: string });

	test("a record cut by a full disk is removed again; the first record after space returns starts on its own line", async () => {
		const disk = mountTmpfs(64);
		try {
			const p = join(disk.dir, "audit.log");
			const lines: string[] = [];
			const log = createAuditLog({ path: p, log: l => lines.push(l) });
			await log.calls.start({ id: "before", sid: SID, tool: "read", args: {} });
			const before = readFileSync(p);
			// The file's one page has about 3.9 KiB left, the disk none: the 6 KiB record lands only in part.
			disk.fill();
			log.write(big("cut"));
			expect(lines.filter(notWritten)).toHaveLength(1);
			expect(lines[0]).toContain(`audit record not written to ${p} (ENOSPC)`);
			expect(readFileSync(p).equals(before)).toBe(true);
			disk.free();
			await log.calls.start({ id: "after", sid: SID, tool: "read", args: {} });
			expect(parsed(p).map(r => r.id)).toEqual(["before", "after"]);
		} finally {
			disk.unmount();
		}
	});

	test("a live file that ends inside a line (another writer cut off) -> the next record starts on a new line", async () => {
		const p = join(dir, "audit.log");
		writeFileSync(p, '{"id":"whole"}\n{"id":"cut', { mode: 0o600 });
		const log = createAuditLog({ path: p, log: () => {} });
		await log.calls.start({ id: "next", sid: SID, tool: "read", args: {} });
		const text = readFileSync(p, "utf8").split("\n");
		expect(text[1]).toBe('{"id":"cut');
		expect(JSON.parse(text[2] as string).id).toBe("next");
	});

	test("directories planted at .1, .2 and .3 -> every record still lands (in the live file), said once, the directories untouched", async () => {
		const p = join(dir, "audit.log");
		for (const g of [".1", ".2", ".3"]) {
			mkdirSync(`${p}${g}`);
			writeFileSync(join(`${p}${g}`, "x"), "planted");
		}
		const lines: string[] = [];
		const log = createAuditLog({ path: p, log: l => lines.push(l), maxBytes: 1000 });
		for (let i = 0; i < 40; i++) await log.calls.start({ id: `r${i}`, sid: SID, tool: "read", args: {} });
		expect(lines.filter(notWritten)).toEqual([]);
		expect(parsed(p).map(r => r.id)).toEqual(Array.from({ length: 40 }, (_, i) => `r${i}`));
		expect(lines).toEqual([
			`a2a-bridge: audit log ${p} not rotated: ${p}.1 is not a regular file the bridge made (remove it); records go on in it past the limit`,
		]);
		expect(readFileSync(join(`${p}.1`, "x"), "utf8")).toBe("planted");
		// Removed: the next record over the limit rotates as usual.
		for (const g of [".1", ".2", ".3"]) rmSync(`${p}${g}`, { recursive: true });
		await log.calls.start({ id: "rotated", sid: SID, tool: "read", args: {} });
		expect(parsed(p).map(r => r.id)).toEqual(["rotated"]);
		expect(parsed(`${p}.1`)).toHaveLength(40);
	});

	test("a directory at .3 -> no rename lands on it and no older generation is lost silently", async () => {
		const p = join(dir, "audit.log");
		mkdirSync(`${p}.3`);
		writeFileSync(`${p}.2`, '{"id":"old2"}\n');
		writeFileSync(`${p}.1`, '{"id":"old1"}\n');
		const said: string[] = [];
		const log = createAuditLog({ path: p, log: l => said.push(l), maxBytes: 300 });
		for (let i = 0; i < 5; i++) await log.calls.start({ id: `r${i}`, sid: SID, tool: "read", args: {} });
		expect(said.filter(notWritten)).toEqual([]);
		expect(parsed(`${p}.2`).map(r => r.id)).toEqual(["old2"]);
		expect(parsed(`${p}.1`).map(r => r.id)).toEqual(["old1"]);
		expect(parsed(p)).toHaveLength(5);
	});
});

describe("issue 30: a FIFO planted at the live path", () => {
	test("records fill nothing that blocks: once the pipe is full a write fails (EAGAIN) and is reported; the host never freezes", async () => {
		const p = join(dir, "audit.log");
		Bun.spawnSync(["mkfifo", "-m", "600", p]);
		const lines: string[] = [];
		const log = createAuditLog({ path: p, log: l => lines.push(l) });
		// About 200 KiB: more than a pipe holds (64 KiB). Before, the open alone blocked with no reader.
		const big = { f: "x".repeat(110), g: "y".repeat(110), h: "z".repeat(110), i: "w".repeat(110) };
		for (let i = 0; i < 200; i++) log.write({ id: `r${i}`, sid: SID, phase: "start", tool: "read", args: big });
		expect(lines.filter(notWritten).length).toBeGreaterThan(0);
		expect(lines[0]).toContain(`audit record not written to ${p} (EAGAIN)`);
	});
});
