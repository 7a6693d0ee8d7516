/**
 * The systemd user unit of docs/guide/service.md (issue 39 item 8), as written: the same unit in both languages,
 * parsed strictly and by `systemd-analyze verify --user` when the machine has it, then its ExecStart run with its
 * WorkingDirectory and Environment in a throwaway HOME, stdin /dev/null, as systemd runs it. The bridge must answer
 * a `bash` call on the pinned port (the marker lands in the served directory), and SIGTERM to the main process only
 * (KillMode=mixed) must stop it cleanly within TimeoutStopSec.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, spawnSync } from "bun";
import { callTool, canConnect, Host, openSession, PLACEHOLDER_MODELS, ROOT } from "../../helpers/host.ts";

const KEYS: Record<string, readonly string[]> = {
	Unit: ["Description"],
	Service: [
		"Type",
		"WorkingDirectory",
		"Environment",
		"ExecStart",
		"Restart",
		"RestartSec",
		"KillMode",
		"TimeoutStopSec",
	],
	Install: ["WantedBy"],
};

/** The first ```ini block of a page. */
function unitOf(page: string): string {
	const m = /^```ini\n([\s\S]*?)^```$/m.exec(readFileSync(join(ROOT, "docs", page), "utf8"));
	if (!m?.[1]) throw new Error(`no ini block in docs/${page}`);
	return m[1];
}

/** Sections and keys this page may use, each line `Key=Value`, no key twice (Environment aside); throws naming the line. */
function parseUnit(text: string): Map<string, Map<string, string>> {
	const out = new Map<string, Map<string, string>>();
	let section: Map<string, string> | undefined;
	let name = "";
	for (const line of text.split("\n")) {
		if (line.trim() === "") continue;
		const head = /^\[([A-Za-z]+)\]$/.exec(line);
		if (head?.[1]) {
			name = head[1];
			if (!KEYS[name] || out.has(name)) throw new Error(`unit: section [${name}] unknown or repeated`);
			section = new Map();
			out.set(name, section);
			continue;
		}
		const kv = /^([A-Za-z]+)=(\S.*)$/.exec(line);
		if (!section || !kv?.[1] || kv[2] === undefined) throw new Error(`unit: not a Key=Value line: '${line}'`);
		if (!KEYS[name]?.includes(kv[1])) throw new Error(`unit: key ${kv[1]} is not one of [${name}]'s`);
		if (section.has(kv[1])) throw new Error(`unit: ${kv[1]} twice`);
		// Only %h is used, and no quoting: the test's own word split is then systemd's.
		if (/%[^h]|["'\\]/.test(kv[2]))
			throw new Error(`unit: ${kv[1]} uses a specifier or quoting the test does not expand`);
		section.set(kv[1], kv[2]);
	}
	return out;
}

describe("docs/guide/service.md: the systemd user unit", () => {
	test("one unit in both languages; it parses (systemd-analyze too); its ExecStart serves, then stops on SIGTERM", async () => {
		const unit = unitOf("guide/service.md");
		expect(unitOf("zh/guide/service.md")).toBe(unit);
		const parsed = parseUnit(unit);
		const svc = parsed.get("Service") ?? new Map<string, string>();
		expect([svc.get("Type"), svc.get("KillMode"), parsed.get("Install")?.get("WantedBy")]).toEqual([
			"simple",
			"mixed",
			"default.target",
		]);

		const home = mkdtempSync(join(tmpdir(), "a2a-service-"));
		try {
			symlinkSync(ROOT, join(home, "pi-a2a-ext"));
			mkdirSync(join(home, "project"));
			mkdirSync(join(home, ".omp", "agent"), { recursive: true });
			writeFileSync(join(home, ".omp", "agent", "models.yml"), PLACEHOLDER_MODELS);
			const unitDir = join(home, ".config", "systemd", "user");
			mkdirSync(unitDir, { recursive: true });
			writeFileSync(join(unitDir, "a2a-host.service"), unit);
			if (spawnSync(["sh", "-c", "command -v systemd-analyze"]).exitCode === 0) {
				const run = join(home, "run");
				mkdirSync(run, { mode: 0o700 });
				const v = spawnSync(["systemd-analyze", "verify", "--user", join(unitDir, "a2a-host.service")], {
					env: { PATH: process.env.PATH ?? "", HOME: home, XDG_RUNTIME_DIR: run },
				});
				// An unknown key is only a warning to systemd; here any word from it fails.
				expect({ code: v.exitCode, said: v.stderr.toString() + v.stdout.toString() }).toEqual({ code: 0, said: "" });
			}

			const expand = (v: string | undefined) => (v ?? "").replaceAll("%h", home);
			const environment = Object.fromEntries(
				[...unit.matchAll(/^Environment=([A-Za-z_]+)=(.*)$/gm)].map(m => [m[1] as string, expand(m[2])]),
			);
			const argv = expand(svc.get("ExecStart")).split(/\s+/);
			const proc = spawn({
				cmd: argv,
				cwd: expand(svc.get("WorkingDirectory")),
				env: { HOME: home, USER: "root", LANG: "C.UTF-8", TMPDIR: process.env.TMPDIR ?? "/tmp", ...environment },
				stdin: "ignore",
				stdout: "pipe",
				stderr: "pipe",
				detached: true,
			});
			let out = "";
			for (const stream of [proc.stdout, proc.stderr]) {
				(async () => {
					const decoder = new TextDecoder();
					for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
				})();
			}
			const until = async (re: RegExp, ms: number): Promise<RegExpMatchArray> => {
				for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(100)) {
					const m = out.match(re);
					if (m) return m;
					if (proc.exitCode !== null) break;
				}
				throw new Error(`no ${re} within ${ms} ms (exit ${proc.exitCode}) in:\n${out}`);
			};
			try {
				await until(/^a2a host: Ctrl-C stops$/m, 120_000);
				// The journal's first line: no terminal, so prompts are denied, said as the flag, not as a default.
				expect(out).toContain("a prompt omp raises is answered Deny (--approvals deny)");
				expect(out).toContain("yolo");
				// Second channel: the config the first start wrote pins the port the banner prints.
				const url = new URL((await until(/^ {2}URL: +(\S+)/m, 1000))[1] ?? "");
				const config = JSON.parse(readFileSync(join(home, ".omp", "agent", "a2a-bridge.json"), "utf8"));
				expect(Number(url.port)).toBe(config.port);
				const host = new Host(home, config.port, config.token);
				const sid = await openSession(host);
				const r = await callTool(host, sid, "bash", { command: "echo served > service-marker" });
				expect(r.status).toBe(200);
				expect(readFileSync(join(home, "project", "service-marker"), "utf8")).toBe("served\n");

				// systemctl stop with KillMode=mixed: SIGTERM to the main process only, SIGKILL after TimeoutStopSec.
				const stopBound = Number(svc.get("TimeoutStopSec")) * 1000;
				const started = Date.now();
				proc.kill("SIGTERM");
				const code = await Promise.race([proc.exited, Bun.sleep(stopBound).then(() => "timeout")]);
				expect({ code, within: Date.now() - started < stopBound }).toEqual({ code: 0, within: true });
				expect(out).toMatch(/omp shut down \(exit 0\); port \d+ released; no process left/);
				expect(await canConnect(config.port)).toBe(false);
			} finally {
				if (proc.exitCode === null) process.kill(-proc.pid, "SIGKILL");
			}
		} finally {
			rmSync(home, { recursive: true, force: true });
		}
		expect(existsSync(home)).toBe(false);
	}, 180_000);
});
