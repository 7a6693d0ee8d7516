/**
 * The lab guide (docs/guide/lab.md, and its Chinese twin docs/zh/guide/lab.md) run as written: every shell
 * block of the page, in order, as one bash script on a "laptop" with no ~/.omp, against a real host that
 * serves a directory holding this checkout's test/fixtures/lab (as `npm run host` in the checkout does). Only
 * the pasted token and the forwarded URL are substituted; the `ssh -L` lines are not run (no SSH server).
 * What the page's commands did is then checked through second channels: the simulated board's own record
 * (lab/board.jsonl), the files on both disks, the process table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "bun";
import { type BoardEvent, LAB_FIXTURES } from "../../../scripts/lab-board.ts";
import { shellBlocks } from "../../helpers/docs.ts";
import { Host, ROOT, withHost } from "../../helpers/host.ts";

const PAGES = ["docs/guide/lab.md", "docs/zh/guide/lab.md"];
/** The page's commands, in order, without the SSH forwards. */
const commands = (page: string): string[] =>
	shellBlocks(page)
		.flat()
		.map(c => c.text)
		.filter(t => !t.startsWith("ssh -L "));

const sha256 = (b: Uint8Array): string => new Bun.CryptoHasher("sha256").update(b).digest("hex");
/** Pids of live processes whose command line holds `needle`. */
/** Processes whose command line holds `needle` and whose HOME is `home` (other tests run the same board at once). */
const pidsWith = (needle: string, home: string): number[] =>
	readdirSync("/proc")
		.filter(p => /^\d+$/.test(p))
		.filter(p => {
			try {
				if (!readFileSync(`/proc/${p}/cmdline`, "utf8").includes(needle)) return false;
				return readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`HOME=${home}`);
			} catch {
				return false;
			}
		})
		.map(Number);

let host: Host;
let laptop: string;
let out = "";
let err = "";
let code = -1;

describe("the lab guide, run as written against a real host and the simulated board", () => {
	beforeAll(async () => {
		host = await Host.start();
		// The host serves a directory that holds the checkout's fixtures where the page expects them.
		mkdirSync(join(host.cwd, "test", "fixtures"), { recursive: true });
		symlinkSync(LAB_FIXTURES, join(host.cwd, "test", "fixtures", "lab"));
		laptop = mkdtempSync(join(tmpdir(), "a2a-lab-laptop-"));
		mkdirSync(join(laptop, "home"));
		const script = commands(PAGES[0] as string)
			.join("\n")
			.replace("<paste the token>", host.token)
			.replace("http://127.0.0.1:8765/", host.url);
		const proc = spawn({
			cmd: ["bash", "-euo", "pipefail", "-c", script],
			cwd: laptop,
			env: {
				PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
				HOME: join(laptop, "home"),
				LANG: "C.UTF-8",
			},
			stdout: "pipe",
			stderr: "pipe",
		});
		const timer = setTimeout(() => proc.kill("SIGKILL"), 100_000);
		[code, out, err] = await Promise.all([
			proc.exited,
			new Response(proc.stdout).text(),
			new Response(proc.stderr).text(),
		]);
		clearTimeout(timer);
	}, 150_000);

	afterAll(async () => {
		await host?.stop();
		host?.cleanup();
		if (laptop) rmSync(laptop, { recursive: true, force: true });
	});

	const events = (): BoardEvent[] =>
		readFileSync(join(host.cwd, "lab", "board.jsonl"), "utf8")
			.trim()
			.split("\n")
			.map(l => JSON.parse(l) as BoardEvent);

	test("the Chinese page runs the same commands, in the same order", () => {
		expect(commands(PAGES[1] as string)).toEqual(commands(PAGES[0] as string));
	});

	test("every command of the page ran, the script exited 0 and wrote nothing to stderr", () => {
		expect({ code, err }).toEqual({ code: 0, err: "" });
		expect(out.trimEnd().split("\n").at(-1)).not.toBe("");
	});

	test("the firmware arrived whole (digest checked), and the board flashed and booted exactly those bytes", () => {
		const fw = new Uint8Array(readFileSync(join(laptop, "fw.bin")));
		expect(sha256(new Uint8Array(readFileSync(join(host.cwd, "lab", "fw.bin"))))).toBe(sha256(fw));
		expect(out).toContain(`"size":${fw.length}`);
		const flashes = events().filter(e => e.event === "flash");
		expect(flashes).toEqual([expect.objectContaining({ ok: true, size: fw.length, sha256: sha256(fw) })]);
		expect(events().filter(e => e.event === "booted" && e.sha256 === sha256(fw)).length).toBeGreaterThanOrEqual(2);
	});

	test("the flash printed live progress before its result", () => {
		const progress = out.split("\n").filter(l => /^progress: flash: \d+%/.test(l));
		expect(progress.length, out.slice(0, 4000)).toBeGreaterThanOrEqual(3);
		const last = out.lastIndexOf("progress: flash:");
		expect(out.indexOf("flash: verified", last)).toBeGreaterThan(last);
	});

	test("the console typed, interrupted and waited for a fresh boot, as the board recorded; then it was stopped", () => {
		const lines = events()
			.filter(e => e.event === "line")
			.map(e => e.text);
		const marker = lines.find(l => /^echo mark-\d+$/.test(l ?? ""));
		expect(lines).toEqual(["reboot", "version", "watch", marker, "reboot"]);
		const all = events();
		const watch = all.findIndex(e => e.text === "watch");
		expect(all[watch + 1]?.event).toBe("interrupt");
		// The wait matched (its grep passed) and the board booted again after the marker's reboot.
		expect(out).toContain(`\nMatched: ${(marker ?? "").slice(5)}\n`);
		expect(all.slice(all.findIndex(e => e.text === marker)).map(e => e.event)).toEqual([
			"line",
			"line",
			"reboot",
			"booted",
		]);
		expect(out).toMatch(/^console: exited exit=0 /m);
		expect(out).toMatch(/Stopped console: exited exit=0/);
		expect(pidsWith(join("fixtures", "lab", "console.py"), host.home)).toEqual([]);
	});

	test("the build ran to exit 0; its artifact and the whole test log came back byte for byte", () => {
		expect(out).toMatch(/build: exited exit=0/);
		const art = new Uint8Array(readFileSync(join(host.cwd, "lab", "app.bin")));
		expect(art.length).toBe(2_000_000);
		expect(sha256(new Uint8Array(readFileSync(join(laptop, "app.bin"))))).toBe(sha256(art));
		expect(sha256(new Uint8Array(readFileSync(join(laptop, "part.bin"))))).toBe(sha256(art));
		const log = readFileSync(join(host.cwd, "lab", "test.log"), "utf8");
		expect(readFileSync(join(laptop, "test.log"), "utf8")).toBe(log);
		expect(log.split("\n").length).toBe(20_001);
		expect(out).toContain("test 1 passed\ntest 2 passed\n");
		expect(out).toContain("passed\ntest 19999 passed\ntest 20000 passed\n");
		expect(existsSync(join(laptop, "art.txt"))).toBe(true);
	});
});

describe("the guide's backgrounding setting: bash.autoBackground.thresholdMs in the host's config.yml moves the point", () => {
	test("at 2 s instead of 60 s the live output stops and the heartbeats say the host backgrounded the command; the result is whole", async () => {
		await withHost(
			{ files: { ".omp/agent/config.yml": "bash:\n  autoBackground:\n    thresholdMs: 2000\n" } },
			async h => {
				const client = new Client({ name: "lab", version: "0" });
				await client.connect(
					new StreamableHTTPClientTransport(new URL(h.url), {
						requestInit: { headers: { Authorization: `Bearer ${h.token}` } },
					}),
				);
				const messages: Array<{ at: number; message: string }> = [];
				const t0 = Date.now();
				const result = (await client.callTool(
					{ name: "bash", arguments: { command: "for i in $(seq 1 9); do echo line $i; sleep 1; done" } },
					undefined,
					{ onprogress: p => messages.push({ at: Date.now() - t0, message: p.message ?? "" }), timeout: 60_000 },
				)) as { content: Array<{ text: string }> };
				await client.close();
				const text = result.content.map(c => c.text).join("\n");
				expect(text).toContain("line 1\n");
				expect(text).toContain("line 9\n");
				const beats = messages.filter(m => m.message.includes("the host backgrounded the command"));
				expect(beats.length, JSON.stringify(messages)).toBeGreaterThan(0);
				// Live output only before the threshold: no progress message shows a line printed after it.
				expect(messages.filter(m => /line [6-9]/.test(m.message))).toEqual([]);
			},
		);
	}, 90_000);
});
