/**
 * A day at the lab box, end to end (issue 31, contract §20): a real host, the official MCP SDK client, and
 * the simulated board (test/fixtures/lab/board.py) on a pseudo-terminal pair. Firmware up with PUT and
 * Repr-Digest; flashed by a flasher through `bash` with live progress; the serial console through the
 * host's `hub` (start, a command, Ctrl-C as a key, logs with a cursor, the stale-`wait` trap and a pattern
 * that avoids it, leave and stop); a build started by one client and read to its exit status by another;
 * the artifact back with Want-Repr-Digest and a Range resume. Each step is checked through a second
 * channel: the board's own record of what it received, the file on disk, the process table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LAB_FIXTURES, SimBoard } from "../../../scripts/lab-board.ts";
import { Host } from "../../helpers/host.ts";
import { modernPost } from "../../helpers/modern.ts";

const READER = `reader${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");
const FIRMWARE = crypto.getRandomValues(new Uint8Array(300_000));
const sha256 = (b: Uint8Array): string => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const reprDigest = (b: Uint8Array): string => `sha-256=:${new Bun.CryptoHasher("sha256").update(b).digest("base64")}:`;

let host: Host;
let board: SimBoard;
let lab: Client;

async function connect(token: string, name: string): Promise<Client> {
	const client = new Client({ name, version: "0" });
	await client.connect(
		new StreamableHTTPClientTransport(new URL(host.url), {
			requestInit: { headers: { Authorization: `Bearer ${token}` } },
		}),
	);
	return client;
}

/** One tool call's text; a tool error fails the test with its text. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
	const result = (await client.callTool({ name, arguments: args })) as {
		content: Array<{ text?: string }>;
		isError?: boolean;
	};
	const text = result.content.map(c => c.text ?? "").join("\n");
	if (result.isError) throw new Error(`${name} ${JSON.stringify(args)}: ${text}`);
	return text;
}

const hub = (args: Record<string, unknown>, client = lab): Promise<string> => call(client, "hub", args);
const cursorOf = (text: string): number => Number(/cursor=(\d+)\]$/.exec(text.trimEnd())?.[1]);
const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(status(pid));
const status = (pid: number): string => {
	try {
		return readFileSync(`/proc/${pid}/status`, "utf8");
	} catch {
		return "";
	}
};

/** Follows the console's log past `cursor` until `pattern` shows in it (each follow is a bounded long poll). */
async function readUntil(cursor: number, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
	const deadline = Date.now() + timeoutMs;
	let text = "";
	while (Date.now() < deadline) {
		text = await hub({ op: "logs", name: "console", cursor, follow: true, timeout: 5 });
		if (pattern.test(text)) return text;
		cursor = cursorOf(text);
	}
	throw new Error(`console log never showed ${pattern}: ${text}`);
}

describe("the lab box: flash, console, build and artifacts against a simulated board", () => {
	beforeAll(async () => {
		host = await Host.start({ config: { tokens: [{ name: "reader", token: READER }] } });
		mkdirSync(join(host.cwd, "lab"));
		board = await SimBoard.start(join(host.cwd, "lab"));
		lab = await connect(host.token, "lab-laptop");
	}, 90_000);

	afterAll(async () => {
		await lab?.close().catch(() => {});
		await host?.stop();
		await board?.stop();
		host?.cleanup();
	});

	test("0. the server instructions reach the client (both eras) and say how long work, consoles and files are done here", async () => {
		// The official SDK client (2025 era) keeps what initialize said.
		const said = lab.getInstructions() ?? "";
		const modern = (await (await modernPost(host, "server/discover")).json()) as { result: { instructions: string } };
		for (const text of [said, modern.result.instructions]) {
			expect(text).toContain(`Tools of the omp host in ${host.cwd},`);
			expect(text).toContain('hub op "start" runs a program');
			expect(text).toContain("type a fresh marker first");
			expect(text).toContain("after 60 s by default");
			expect(text).toContain("PUT /blob?path=P uploads");
		}
		// Every tool the text names as a tool is one the host lists.
		const listed = new Set((await lab.listTools()).tools.map(t => t.name));
		for (const named of ["hub", "bash"]) expect(listed.has(named)).toBe(true);
	});

	test("1. the firmware goes up with PUT and Repr-Digest; the file on disk is those bytes", async () => {
		const res = await fetch(new URL("/blob?path=lab/fw.bin", host.url), {
			method: "PUT",
			headers: { authorization: `Bearer ${host.token}`, "repr-digest": reprDigest(FIRMWARE) },
			body: FIRMWARE,
		});
		const body = (await res.json()) as Record<string, unknown>;
		expect(res.status).toBe(200);
		expect(body).toMatchObject({ path: join(host.cwd, "lab", "fw.bin"), size: FIRMWARE.length });
		expect(sha256(new Uint8Array(readFileSync(join(host.cwd, "lab", "fw.bin"))))).toBe(sha256(FIRMWARE));
	});

	test("2. the flasher runs through bash with live progress; the board records the image and boots it", async () => {
		const before = board.events().length;
		const progress: Array<{ at: number; message: string }> = [];
		const result = (await lab.callTool(
			{ name: "bash", arguments: { command: `python3 ${LAB_FIXTURES}/flash.py lab/ttyBOARD lab/fw.bin 3` } },
			undefined,
			{
				onprogress: p => progress.push({ at: Date.now(), message: p.message ?? "" }),
				resetTimeoutOnProgress: true,
			},
		)) as { content: Array<{ text: string }>; isError?: boolean };
		const answered = Date.now();
		const text = result.content.map(c => c.text).join("\n");
		expect(result.isError ?? false).toBe(false);
		expect(text).toContain(`flash: verified ${sha256(FIRMWARE)}`);
		// Live: several percentages arrived as progress, the first well before the answer.
		const percents = new Set(progress.flatMap(p => [...p.message.matchAll(/flash: (\d+)%/g)].map(m => m[1])));
		expect(percents.size).toBeGreaterThanOrEqual(3);
		expect(answered - (progress[0]?.at ?? answered)).toBeGreaterThan(1000);
		// Second channel: the board's own record: the image it received, then a boot of that image.
		const flashed = await board.until("flash", e => e.event === "flash", 5000, before);
		expect(flashed).toMatchObject({ ok: true, size: FIRMWARE.length, sha256: sha256(FIRMWARE) });
		const booted = await board.until("a boot of the new image", e => e.event === "booted", 10_000, before);
		expect(booted.sha256).toBe(sha256(FIRMWARE));
	}, 60_000);

	test("3. the serial console through hub: type, Ctrl-C, logs with a cursor, the stale-wait trap and its cure, leave and stop", async () => {
		const started = await hub({
			op: "start",
			name: "console",
			application: "python3",
			args: [`${LAB_FIXTURES}/console.py`, "-b", "115200", "lab/ttyBOARD"],
			ready: { log: "Terminal ready", timeout: 20 },
		});
		const pid = Number(/pid=(\d+)/.exec(started)?.[1]);
		expect(started).toContain("Ready log matched: Terminal ready");
		expect(alive(pid)).toBe(true);
		expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("console.py");

		// A first reboot with "wait for login:" works: the console has shown no login line yet.
		let mark = board.events().length;
		await hub({ op: "send", name: "console", text: "reboot" });
		const first = await hub({ op: "wait", name: "console", pattern: "login:", timeout: 20 });
		const firstAt = Date.now() / 1000;
		expect(first).toContain("Matched: login:");
		const firstBoot = board
			.events()
			.slice(mark)
			.find(e => e.event === "booted");
		expect(firstBoot?.t ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(firstAt);

		// A command, typed: the board received exactly that line; the log past the cursor shows its answer.
		let cursor = cursorOf(await hub({ op: "logs", name: "console" }));
		const nonce = `hello-${crypto.randomUUID().slice(0, 8)}`;
		mark = board.events().length;
		expect(await hub({ op: "send", name: "console", text: `echo ${nonce}` })).toStartWith("Sent input to console");
		expect((await board.until("the typed line", e => e.event === "line", 5000, mark)).text).toBe(`echo ${nonce}`);
		const answer = await readUntil(cursor, new RegExp(`^${nonce}$`, "m"));
		cursor = cursorOf(answer);

		// Ctrl-C as a key reaches the board as a byte (the console is raw): the running command stops, the
		// console itself lives on.
		mark = board.events().length;
		await hub({ op: "send", name: "console", text: "watch" });
		cursor = cursorOf(await readUntil(cursor, /tick 3/));
		await hub({ op: "send", name: "console", keys: ["CTRL_C"] });
		await board.until("Ctrl-C", e => e.event === "interrupt", 5000, mark);
		cursor = cursorOf(await readUntil(cursor, /\^C/));
		expect(alive(pid)).toBe(true);
		const quiet = await hub({ op: "logs", name: "console", cursor, follow: true, timeout: 1 });
		expect(quiet).toContain("follow timed out");

		// The trap: `wait` matches output already in the log, so the same "reboot, then wait for login:" now
		// answers at once from the earlier boot, while the board (its record) has not booted again.
		mark = board.events().length;
		await hub({ op: "send", name: "console", text: "reboot" });
		const stale = await hub({ op: "wait", name: "console", pattern: "login:", timeout: 20 });
		const answeredAt = Date.now() / 1000;
		expect(stale).toContain("Matched: login:");
		const reboot = await board.until("the reboot's boot", e => e.event === "booted", 10_000, mark);
		expect(reboot.t, "the wait answered before the board had booted again").toBeGreaterThan(answeredAt);

		// The cure: a fresh marker first, then a pattern that needs the marker before the prompt.
		const marker = `mark-${crypto.randomUUID().slice(0, 8)}`;
		mark = board.events().length;
		await hub({ op: "send", name: "console", text: `echo ${marker}` });
		await hub({ op: "send", name: "console", text: "reboot" });
		const fresh = await hub({ op: "wait", name: "console", pattern: `${marker}[\\s\\S]*login:`, timeout: 30 });
		expect(fresh).toContain("Matched:");
		expect(fresh).not.toContain("Wait timed out");
		const booted = board
			.events()
			.slice(mark)
			.find(e => e.event === "booted");
		expect(booted, "the wait answered only after the board booted again").toBeDefined();

		// The old recipe (issue 39): a cursor read is no cure. `logs` with a cursor and `follow` answers at the
		// first byte past the cursor with the last `lines` lines of the whole log, so grepping it for `login:` finds
		// the previous boot's line while the board (its record) has not booted again; the marker wait above did not.
		await hub({ op: "wait", name: "console", pattern: `${marker}[\\s\\S]*login:[^\\n]*\\n[\\s\\S]*# `, timeout: 10 });
		cursor = cursorOf(await hub({ op: "logs", name: "console" }));
		mark = board.events().length;
		await hub({ op: "send", name: "console", text: "reboot" });
		const tail = await hub({ op: "logs", name: "console", cursor, follow: true, lines: 20, timeout: 20 });
		const tailAt = Date.now() / 1000;
		expect(tail).not.toContain("follow timed out");
		expect(tail, "the cursor read shows a login line from before its cursor").toContain("login:");
		const cursorBoot = await board.until("the reboot after the cursor read", e => e.event === "booted", 10_000, mark);
		expect(cursorBoot.t, "the cursor read answered before the board booted again").toBeGreaterThan(tailAt);
		await hub({ op: "wait", name: "console", pattern: `${marker}[\\s\\S]*login:[\\s\\S]*login:`, timeout: 10 });

		// Leave the way picocom does (C-a C-x, as raw text), then stop: the console process is gone, and
		// the board got no input from the exit keys.
		mark = board.events().length;
		await hub({ op: "send", name: "console", text: "\u0001\u0018", enter: false });
		const exited = await hub({ op: "wait", name: "console", timeout: 10 });
		expect(exited).toMatch(/console: exited exit=0/);
		await hub({ op: "stop", name: "console" });
		expect(alive(pid)).toBe(false);
		expect(board.events().slice(mark)).toEqual([]);
	}, 120_000);

	test("4. a build started by one client is read to its exit status by another client with another token", async () => {
		const script =
			'for i in 1 2 3 4 5 6; do echo "[$i/6] CC unit$i.o"; sleep 1; done; ' +
			"head -c 2000000 /dev/urandom > lab/app.bin; echo built lab/app.bin; exit 0";
		const starter = await connect(host.token, "starter");
		const started = await hub(
			{ op: "start", name: "build", application: "/bin/sh", args: ["-c", script], pty: false },
			starter,
		);
		const pid = Number(/pid=(\d+)/.exec(started)?.[1]);
		await starter.close();
		expect(alive(pid)).toBe(true);

		const reader = await connect(READER, "reader");
		try {
			const waited = await hub({ op: "wait", name: "build", for: "exit", timeout: 60 }, reader);
			expect(waited).toMatch(/build: exited exit=0/);
			expect(alive(pid)).toBe(false);
			const log = await hub({ op: "logs", name: "build", head: true, lines: 1000 }, reader);
			expect(log.split("\n").filter(l => /^\[\d\/6\] CC unit\d\.o$/.test(l))).toHaveLength(6);
			expect(log).toContain("built lab/app.bin");
			expect(readFileSync(join(host.cwd, "lab", "app.bin")).length).toBe(2_000_000);
		} finally {
			await reader.close();
		}
	}, 90_000);

	test("5. the artifact comes back with Want-Repr-Digest, and a cut download resumes with Range", async () => {
		const onDisk = new Uint8Array(readFileSync(join(host.cwd, "lab", "app.bin")));
		const url = new URL("/blob?path=lab/app.bin", host.url);
		const auth = { authorization: `Bearer ${host.token}` };
		// The first try is cut after about a third of the bytes.
		const first = await fetch(url, { headers: { ...auth, "want-repr-digest": "sha-256=1" } });
		expect(first.status).toBe(200);
		const announced = first.headers.get("repr-digest");
		expect(announced).toBe(reprDigest(onDisk));
		const parts: Uint8Array[] = [];
		let got = 0;
		const rd = (first.body as ReadableStream<Uint8Array>).getReader();
		while (got < 700_000) {
			const { value, done } = await rd.read();
			if (done) break;
			parts.push(value);
			got += value.length;
		}
		await rd.cancel();
		const rest = await fetch(url, { headers: { ...auth, range: `bytes=${got}-` } });
		expect(rest.status).toBe(206);
		expect(rest.headers.get("content-range")).toBe(`bytes ${got}-${onDisk.length - 1}/${onDisk.length}`);
		parts.push(new Uint8Array(await rest.arrayBuffer()));
		const whole = Buffer.concat(parts);
		expect(whole.length).toBe(onDisk.length);
		expect(reprDigest(whole)).toBe(announced as string);
	}, 60_000);
});
