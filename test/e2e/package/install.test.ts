/**
 * Installing the bridge as an omp plugin, end to end, in a throwaway HOME and without the network:
 * `omp install git+http://127.0.0.1:<port>/…` from a bare clone of this repository served by
 * `git http-backend` on loopback, a host start that loads it from ~/.omp/plugins, `omp plugin
 * uninstall`, and the README's headless host, token and probe commands run from the installed copy; the same
 * for a local checkout (`omp install <dir>`); and what `npm pack` would ship.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { spawn } from "bun";
import { shellBlocks } from "../../helpers/docs.ts";
import { type GitHttp, serveGit } from "../../helpers/git-http.ts";
import { BUN, freePort, OMP, PLACEHOLDER_MODELS, ROOT, type RpcFrame } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";
import { waitFor } from "../../helpers/wait.ts";

const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };
let home: string;
let env: Record<string, string>;

async function run(cmd: string[], cwd = join(home, "work")): Promise<{ code: number; out: string }> {
	const { code, out, err } = await runCommand(cmd, { cwd, env });
	return { code, out: out + err };
}

const omp = (...args: string[]) => run([BUN, OMP, ...args]);

/**
 * Boots a plain omp (no `-e`) in the throwaway HOME and reports whether the bridge came up: its start
 * announcement, then tools/list on the pinned port. Without it, the host's full command list (sent
 * several seconds after boot) must lack `/a2a`.
 */
async function bootPlainHost(): Promise<{ bridge: boolean; tools: number }> {
	const port = await freePort();
	const token = crypto.randomUUID() + crypto.randomUUID();
	const cfg = JSON.stringify({ port, token, host: "127.0.0.1" });
	writeFileSync(join(home, ".omp", "agent", "a2a-bridge.json"), cfg, { mode: 0o600 });
	const proc = spawn({
		cmd: [BUN, OMP, "--mode", "rpc", "--no-session"],
		cwd: join(home, "work"),
		env,
		stdin: "pipe",
		stdout: "pipe",
		stderr: "pipe",
	});
	const stderr = new Response(proc.stderr).text();
	try {
		// Keep reading stdout to the end: a cancelled pipe would make omp's next write fail and stop it.
		const bridge = await new Promise<boolean>((settle, fail) => {
			(async () => {
				const decoder = new TextDecoder();
				let buf = "";
				for await (const chunk of proc.stdout) {
					buf += decoder.decode(chunk, { stream: true });
					for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
						const f = JSON.parse(buf.slice(0, nl)) as RpcFrame;
						buf = buf.slice(nl + 1);
						const message = String(f.message);
						if (f.method === "notify" && message.startsWith(`A2A bridge listening on http://127.0.0.1:${port}/`))
							settle(true);
						if (f.type === "available_commands_update") {
							settle((f.commands as Array<{ name: string }>).some(c => c.name === "a2a"));
						}
					}
				}
				fail(new Error(`omp exited during boot: ${await stderr}`));
			})();
		});
		if (!bridge) return { bridge, tools: 0 };
		const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
		const post = (body: unknown, sid?: string) =>
			fetch(`http://127.0.0.1:${port}/`, {
				method: "POST",
				headers: sid ? { ...headers, "mcp-session-id": sid } : headers,
				body: JSON.stringify(body),
			});
		const init = await post({
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
		});
		const sid = init.headers.get("mcp-session-id") ?? "";
		await init.text();
		const list = (await (await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, sid)).json()) as {
			result: { tools: unknown[] };
		};
		return { bridge, tools: list.result.tools.length };
	} finally {
		proc.stdin.end();
		await Promise.race([proc.exited, Bun.sleep(8000)]);
		if (proc.exitCode === null) proc.kill("SIGKILL");
	}
}

beforeAll(() => {
	home = mkdtempSync(join(tmpdir(), "a2a-install-"));
	mkdirSync(join(home, "work"), { recursive: true });
	mkdirSync(join(home, ".omp", "agent"), { recursive: true });
	writeFileSync(join(home, "work", "bunfig.toml"), '[install]\nauto = "disable"\n');
	writeFileSync(join(home, ".omp", "agent", "models.yml"), PLACEHOLDER_MODELS);
	env = {
		// omp's installer runs `bun install` from PATH: the pinned one.
		PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
		HOME: home,
		TMPDIR: process.env.TMPDIR ?? "/tmp",
		LANG: "C.UTF-8",
		// Nothing leaves loopback: any registry lookup fails fast on a closed local port, git never prompts.
		NPM_CONFIG_REGISTRY: "http://127.0.0.1:9/",
		BUN_CONFIG_REGISTRY: "http://127.0.0.1:9/",
		GIT_TERMINAL_PROMPT: "0",
	};
});

afterAll(() => {
	rmSync(home, { recursive: true, force: true });
});

describe("omp install from a git URL", () => {
	let git: GitHttp;
	let url: string;

	beforeAll(async () => {
		const repos = join(home, "git");
		// omp's git-url parser wants at least two path segments (owner/repo) for a generic host.
		const bare = join(repos, "local", `${PKG.name}.git`);
		mkdirSync(dirname(bare), { recursive: true });
		const clone = await run(["git", "clone", "--quiet", "--bare", ROOT, bare], home);
		expect(clone).toMatchObject({ code: 0 });
		git = serveGit(repos);
		url = `git+${git.url}/local/${PKG.name}.git`;
	});

	afterAll(() => git?.stop());

	test("git+http on loopback -> installed into ~/.omp/plugins, loaded by the next host start", async () => {
		const r = await omp("install", url);
		expect(r.out).toContain(`Installed ${PKG.name}@${PKG.version}`);
		expect(r.code).toBe(0);
		expect(git.requests).toContain(`POST /local/${PKG.name}.git/git-upload-pack`);
		const plugins = join(home, ".omp", "plugins");
		expect(JSON.parse(readFileSync(join(plugins, "package.json"), "utf8")).dependencies).toEqual({ [PKG.name]: url });
		expect(existsSync(join(plugins, "node_modules", PKG.name, "extensions", "a2a-bridge.ts"))).toBe(true);
		const host = await bootPlainHost();
		expect(host.bridge).toBe(true);
		expect(host.tools).toBeGreaterThan(5);
	}, 120_000);

	test("the installed plugin runs the README's headless host, token and probe commands (no checkout)", async () => {
		const prefix = "bun ~/.omp/plugins/node_modules/pi-a2a-ext/scripts/";
		const lines = [...new Set(shellBlocks("README.md").flatMap(b => b.map(c => c.text)))].filter(t =>
			t.startsWith(prefix),
		);
		const line = (script: string) => {
			const found = lines.find(t => t.startsWith(`${prefix}${script}`));
			if (!found) throw new Error(`README has no '${prefix}${script}' line`);
			return found;
		};
		const sh = (text: string, extra: Record<string, string> = {}) =>
			runCommand(["bash", "-c", text], { cwd: join(home, "work"), env: { ...env, ...extra } });
		const config = join(home, ".omp", "agent", "a2a-bridge.json");
		const named = () =>
			(JSON.parse(readFileSync(config, "utf8")).tokens ?? []) as Array<{ name: string; token: string }>;
		const plugin = join(home, ".omp", "plugins", "node_modules", PKG.name);
		// What the README's commands need is in the installed copy, and no omp came with it.
		for (const f of ["scripts/host.ts", "scripts/token.ts", "scripts/probe.ts", "scripts/placeholder-provider.ts"]) {
			expect(existsSync(join(plugin, f))).toBe(true);
		}
		expect(existsSync(join(plugin, "node_modules", "@oh-my-pi", "pi-coding-agent"))).toBe(false);

		const host = spawn({
			cmd: ["bash", "-c", line("host.ts")],
			cwd: join(home, "work"),
			env,
			stdout: "pipe",
			stderr: "pipe",
			detached: true,
		});
		let out = "";
		const reading = (async () => {
			for await (const chunk of host.stdout) out += new TextDecoder().decode(chunk);
		})();
		try {
			await waitFor("the URL line or an exit", () => /^ {2}URL: /m.test(out) || host.exitCode !== null, {
				timeoutMs: 90_000,
				everyMs: 100,
				seen: () => out,
			});
			expect(out).toMatch(/^a2a host: omp \d+\.\d+\.\d+ \(on PATH\) in /m);
			const listed = await sh(line("token.ts list"));
			expect(listed.code).toBe(0);
			expect(listed.out).toMatch(/^ {2}owner [0-9a-f]{6}…$/m);
			const added = await sh(line("token.ts add laptop"));
			expect(added.code).toBe(0);
			const first = added.out.trim().split("\n").at(-1) ?? "";
			expect(named()).toEqual([{ name: "laptop", token: first }]);
			// Applied live: the running host takes the new secret.
			await waitFor(
				"laptop's secret accepted",
				async () => (await sh(line("probe.ts"), { A2A_BRIDGE_TOKEN: first })).code === 0,
				{
					timeoutMs: 10_000,
					everyMs: 250,
				},
			);
			const rotated = await sh(line("token.ts rotate laptop"));
			expect(rotated.code).toBe(0);
			const second = rotated.out.trim().split("\n").at(-1) ?? "";
			expect(second).not.toBe(first);
			expect(named()).toEqual([{ name: "laptop", token: second }]);
			const revoked = await sh(line("token.ts revoke laptop"));
			expect(revoked.code).toBe(0);
			expect(named()).toEqual([]);
			await waitFor(
				"the revoked secret refused",
				async () => (await sh(line("probe.ts"), { A2A_BRIDGE_TOKEN: second })).code !== 0,
				{
					timeoutMs: 10_000,
					everyMs: 250,
				},
			);
			const probe = await sh(line("probe.ts"));
			expect(probe.out).toMatch(/^probe: tools\/call bash "echo (a2a-probe-\d+)" -> \1$/m);
			expect(probe.code).toBe(0);
			process.kill(-host.pid, "SIGINT");
			expect(await host.exited).toBe(0);
			await reading;
			expect(out).toMatch(/omp shut down \(exit 0\); port \d+ released; no process left/);
		} finally {
			if (host.exitCode === null) process.kill(-host.pid, "SIGKILL");
		}
	}, 180_000);

	test("a release pinned by the commit its CHANGELOG heading names, going back one and forward again (upgrade.md)", async () => {
		// Releases are commits the CHANGELOG names (tags do not travel with this repository): `## [x.y.z] - date (commit abc1234)`.
		const changelog = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
		const releases = [
			...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2} \(commit ([0-9a-f]{7,40})\)$/gm),
		];
		expect(releases.length).toBeGreaterThan(0);
		const [, version, commit] = releases[0] as RegExpMatchArray;
		const plugin = join(home, ".omp", "plugins", "node_modules", PKG.name, "extensions", "a2a-bridge.ts");
		const at = async (rev: string) =>
			(await run(["git", "-C", ROOT, "show", `${rev}:extensions/a2a-bridge.ts`], home)).out;
		// The pinned form the upgrade page shows, with this test's URL for the repository's.
		const pinned = (
			shellBlocks("docs/guide/upgrade.md")
				.flat()
				.find(c => c.text.startsWith("omp install ") && c.text.includes("#"))?.text ?? ""
		).replace(/"git\+https:\/\/[^#"]+/, `"${url}`);
		expect(pinned).toContain(`#${commit}"`);
		const back = await run(["bash", "-c", pinned]);
		expect(back.out).toContain(`Installed ${PKG.name}@${version}`);
		expect(back.code).toBe(0);
		// Second channel: the installed files are that commit's, and omp's pin names it; the host still loads it.
		expect(readFileSync(plugin, "utf8")).toBe(await at(commit as string));
		const deps = JSON.parse(readFileSync(join(home, ".omp", "plugins", "package.json"), "utf8")).dependencies;
		expect(deps[PKG.name]).toBe(`${url}#${commit}`);
		const shown = shellBlocks("docs/guide/upgrade.md")
			.flat()
			.find(c => c.text.includes('"/.omp/plugins/package.json")'));
		expect((await run(["bash", "-c", shown?.text ?? "false"])).out.trim()).toBe(`${url}#${commit}`);
		expect((await bootPlainHost()).bridge).toBe(true);
		// Forward again: the plain URL installs the branch head.
		const forward = await omp("install", url);
		expect(forward.code).toBe(0);
		expect(readFileSync(plugin, "utf8")).toBe(await at("HEAD"));
	}, 180_000);

	test("the install failures README's troubleshooting names print what it quotes; a git credential helper opens a private repository", async () => {
		// A private repository: the same bare clone behind Basic auth, on its own port.
		const basic = `Basic ${Buffer.from("lab:s3cret").toString("base64")}`;
		const gate = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch: async req => {
				if (req.headers.get("authorization") !== basic) {
					return new Response("no", { status: 401, headers: { "www-authenticate": 'Basic realm="git"' } });
				}
				const u = new URL(req.url);
				const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
				return fetch(`${git.url}${u.pathname}${u.search}`, { method: req.method, headers: req.headers, body });
			},
		});
		try {
			const readme = readFileSync(join(ROOT, "README.md"), "utf8");
			const privateUrl = `git+http://127.0.0.1:${gate.port}/local/${PKG.name}.git`;
			// Each case: what the user typed, and the phrase the README quotes for it (it must be in omp's output too).
			const cases: Array<[string, string]> = [
				[`${url}#no-such-ref`, "no commit matching"],
				[`git+${git.url}/local/no-such-repo.git`, "not found"],
				[privateUrl, "Authentication failed"],
				[`git+http://127.0.0.1:9/local/${PKG.name}.git`, "Couldn't connect to server"],
				[privateUrl.slice("git+".length), "- 401"],
			];
			for (const [target, phrase] of cases) {
				const r = await omp("install", target);
				expect(r.code, `${target}: ${r.out}`).not.toBe(0);
				expect(r.out, target).toContain(phrase);
				expect(readme, `README quotes "${phrase}"`).toContain(phrase);
			}
			// The fix the README gives for a private repository: git's own credential helper, then the same URL.
			await run(["git", "config", "--global", "credential.helper", "store"], home);
			writeFileSync(join(home, ".git-credentials"), `http://lab:s3cret@127.0.0.1:${gate.port}\n`, { mode: 0o600 });
			const ok = await omp("install", privateUrl);
			expect(ok.out).toContain(`Installed ${PKG.name}@${PKG.version}`);
			// Second channel: omp's pin names the private URL, and no secret landed in it.
			const deps = readFileSync(join(home, ".omp", "plugins", "package.json"), "utf8");
			expect(JSON.parse(deps).dependencies[PKG.name]).toBe(privateUrl);
			expect(deps).not.toContain("s3cret");
			// Back to the public URL for the tests after this one.
			expect((await omp("install", url)).code).toBe(0);
		} finally {
			gate.stop(true);
			rmSync(join(home, ".git-credentials"), { force: true });
			rmSync(join(home, ".gitconfig"), { force: true });
		}
	}, 240_000);

	test("omp plugin uninstall pi-a2a-ext -> gone from ~/.omp/plugins, the next host has no bridge", async () => {
		const r = await omp("plugin", "uninstall", PKG.name);
		expect(r.code).toBe(0);
		const plugins = join(home, ".omp", "plugins");
		expect(existsSync(join(plugins, "node_modules", PKG.name))).toBe(false);
		expect(JSON.parse(readFileSync(join(plugins, "package.json"), "utf8")).dependencies ?? {}).toEqual({});
		expect(await bootPlainHost()).toEqual({ bridge: false, tools: 0 });
	}, 120_000);
});

describe("omp install from a local checkout", () => {
	test("omp install <dir> links the checkout; the host loads it; uninstall removes the link", async () => {
		const r = await omp("install", ROOT);
		expect(r.out).toContain(`Linked ${PKG.name}`);
		expect(r.code).toBe(0);
		expect((await bootPlainHost()).bridge).toBe(true);
		// The README's token command through the link, as after a git install.
		const list = await runCommand(["bash", "-c", "bun ~/.omp/plugins/node_modules/pi-a2a-ext/scripts/token.ts list"], {
			cwd: join(home, "work"),
			env,
		});
		expect(list.out).toMatch(/^ {2}owner [0-9a-f]{6}…$/m);
		expect((await omp("plugin", "uninstall", PKG.name)).code).toBe(0);
		expect(existsSync(join(home, ".omp", "plugins", "node_modules", PKG.name))).toBe(false);
	}, 120_000);
});

describe("the README's npx commands, with no Bun or omp on PATH", () => {
	let bare: Record<string, string>;
	let noModelHome: string;

	beforeAll(() => {
		// What a fresh machine has: Node and npm, no global Bun or omp, and no model configured.
		const path = (process.env.PATH ?? "")
			.split(":")
			.filter(d => d && !d.includes("node_modules/.bin") && !existsSync(join(d, "bun")) && !existsSync(join(d, "omp")))
			.join(":");
		noModelHome = mkdtempSync(join(tmpdir(), "a2a-npx-"));
		bare = { ...env, PATH: path, HOME: noModelHome, TERM: "xterm-256color" };
	});

	afterAll(() => {
		rmSync(noModelHome, { recursive: true, force: true });
	});

	const sh = async (line: string) => {
		const { code, out, err } = await runCommand(["bash", "-c", line], { cwd: ROOT, env: bare });
		return { code, out: out + err };
	};

	test("npx omp install . links the checkout; npx omp (TUI, no model) shows the wizard and serves; uninstall", async () => {
		expect((await sh("command -v bun omp || true")).out).toBe("");
		const installed = await sh("npx omp install .");
		expect(installed.out).toContain(`Linked ${PKG.name}`);
		expect(installed.code).toBe(0);

		// The TUI wants a terminal: script(1) gives it one. No key is ever sent, so the wizard stays open.
		const screen = join(noModelHome, "screen.txt");
		const tui = spawn({
			cmd: ["script", "-qfec", "npx omp", screen],
			cwd: ROOT,
			env: bare,
			stdin: "pipe",
			stdout: "ignore",
			stderr: "ignore",
			detached: true,
		});
		const runtime = join(noModelHome, ".omp", "agent", "a2a-bridge.runtime.json");
		let pid = 0;
		try {
			for (let i = 0; i < 600 && !existsSync(runtime) && tui.exitCode === null; i++) await Bun.sleep(100);
			expect(existsSync(runtime), readFileSync(screen, "utf8").slice(-2000)).toBe(true);
			pid = JSON.parse(readFileSync(runtime, "utf8")).hosts[0].pid;
			const probe = await sh("npm run --silent probe");
			expect(probe.out).toMatch(/^probe: tools\/call bash "echo a2a-probe-\d+" -> a2a-probe-\d+$/m);
			expect(probe.code).toBe(0);
			// First start: an intro (Enter skips it), then the setup wizard; the bridge served all along.
			const csi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g");
			const shown = () => readFileSync(screen, "utf8").replace(csi, "");
			for (let i = 0; i < 300 && !shown().includes("esc skip"); i++) await Bun.sleep(100);
			expect(shown()).toContain("press enter to skip");
			expect(shown()).toContain("Setup step 1 of");
			expect(shown()).toContain("esc skip");
		} finally {
			process.kill(-tui.pid, "SIGKILL");
			// omp runs in script's own session; it gets SIGHUP when the terminal goes, SIGKILL if it lingers.
			for (let i = 0; pid > 0 && i < 50 && isAlive(pid); i++) await Bun.sleep(100);
			if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
		}

		const removed = await sh("npx omp plugin uninstall pi-a2a-ext");
		expect(removed.code).toBe(0);
		expect(existsSync(join(noModelHome, ".omp", "plugins", "node_modules", PKG.name))).toBe(false);
	}, 120_000);
});

function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/** Relative imports reachable from the extension entry (static, dynamic and type-only). */
function importGraph(entry: string): Set<string> {
	const seen = new Set<string>();
	const visit = (file: string) => {
		const rel = relative(ROOT, file);
		if (seen.has(rel)) return;
		seen.add(rel);
		if (!file.endsWith(".ts")) return;
		const code = readFileSync(file, "utf8");
		for (const m of code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
			visit(resolve(dirname(file), m[1] as string));
		}
	};
	visit(entry);
	return seen;
}

describe("npm pack", () => {
	test("ships exactly the import graphs of the extension and of the host, token and probe scripts, plus package.json, READMEs, CHANGELOG and LICENSE", async () => {
		const r = await run(["npm", "pack", "--dry-run", "--json", "--ignore-scripts"], ROOT);
		expect(r.code).toBe(0);
		const packed = (JSON.parse(r.out.slice(r.out.indexOf("["))) as Array<{ files: Array<{ path: string }> }>)[0]?.files
			.map(f => f.path)
			.sort();
		const graph = [
			"extensions/a2a-bridge.ts",
			"scripts/host.ts",
			"scripts/token.ts",
			"scripts/probe.ts",
			// Loaded by path (omp -e), not imported: the headless host's stand-in model provider.
			"scripts/placeholder-provider.ts",
		].flatMap(entry => [...importGraph(join(ROOT, entry))]);
		const meta = [
			"package.json",
			"README.md",
			"README_ZN.md",
			"CHANGELOG.md",
			"LICENSE",
			"schema/a2a-bridge.schema.json",
		];
		expect(packed).toEqual([...new Set([...graph, ...meta])].sort());
		expect(
			packed?.filter(p => /^(test|docs|bench|\.ci)\//.test(p) || /^scripts\/(demo|test-parallel|schema)/.test(p)),
		).toEqual([]);
	}, 60_000);
});
