/**
 * Every shell command in the docs (```sh blocks of README.md, README_ZN.md, docs/*.md) is run: by this
 * file (against a real host, the text taken from the docs with only the port and paths substituted),
 * by another test, or by .ci/run. The few that cannot run here are listed with the reason.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "bun";
import { shellBlocks } from "../../helpers/docs.ts";
import { Host, PLACEHOLDER_MODELS, ROOT } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const DOC_FILES = [
	"README.md",
	"README_ZN.md",
	...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
		.filter(f => !f.startsWith(".vitepress"))
		.map(f => `docs/${f}`),
].filter(f => f.endsWith(".md"));

type How = { by: "ci" | "here" } | { by: "test"; file: string; marker: string } | { by: "not run"; why: string };
const CI: How = { by: "ci" };
const HERE: How = { by: "here" };
const RULES: Array<[RegExp, How]> = [
	[/^npm install && npm run host$/, CI],
	[/^npm (install|test)$/, CI],
	[/^\.ci\/run$/, CI],
	[/^npx omp install \.$/, { by: "test", file: "test/e2e/package/install.test.ts", marker: '"npx omp install ."' }],
	[/^npx omp$/, { by: "test", file: "test/e2e/package/install.test.ts", marker: '"npx omp"' }],
	[/^scripts\/mcp-venv\.sh$/, CI],
	[
		/^npx omp plugin uninstall pi-a2a-ext$/,
		{ by: "test", file: "test/e2e/package/install.test.ts", marker: '"npx omp plugin uninstall pi-a2a-ext"' },
	],
	[/^npm run docs$/, { by: "test", file: "test/e2e/site/site.test.ts", marker: '["npm", "run", "docs"]' }],
	[
		/^npm run docs:build$/,
		{ by: "test", file: "test/e2e/site/site.test.ts", marker: '"run", "--silent", "docs:build"' },
	],
	[/^npm run demo$/, { by: "test", file: "test/e2e/headless/demo.test.ts", marker: '"run", "--silent", "demo"' }],
	[
		/^npm run demo:lab$/,
		{ by: "test", file: "test/e2e/headless/demo-lab.test.ts", marker: '"run", "--silent", "demo:lab"' },
	],
	[/^npm run (host|probe) -- /, HERE],
	[/^npm run probe$/, HERE],
	[/^npm run token -- (list|add|rotate|revoke)\b/, HERE],
	[
		/^omp plugin uninstall pi-a2a-ext$/,
		{ by: "test", file: "test/e2e/package/install.test.ts", marker: '"plugin", "uninstall"' },
	],
	[
		/^rm -f ~\/\.omp\/agent\/a2a-bridge\.\*$/,
		{ by: "test", file: "test/e2e/package/uninstall.test.ts", marker: '"rm -f ~/.omp/agent/a2a-bridge."' },
	],
	[/^find ~ -type f -regextype /, { by: "test", file: "test/e2e/package/uninstall.test.ts", marker: '"find ~ "' }],
	[
		/^bun ~\/\.omp\/plugins\/node_modules\/pi-a2a-ext\/scripts\/(host|token|probe)\.ts\b/,
		{
			by: "test",
			file: "test/e2e/package/install.test.ts",
			marker: '"bun ~/.omp/plugins/node_modules/pi-a2a-ext/scripts/"',
		},
	],
	[/^cat ~\/\.omp\/agent\/a2a-bridge\.log\.1 /, HERE],
	[
		/^(TOKEN=|URL=|AUTH=|SID=|H=|B=|D=|n=|curl |size=|tail -c |grep -i '\^repr-digest' |node -p 'require\("\.\/tools\.json"\))/,
		HERE,
	],
	[
		/^(META=|mcp\(\) \{ |mcp (tools\/call|tasks\/)|T=\$\(node -p |for i in \$\(seq 60\); do mcp |node -p 'require\("\.\/got\.json"\))/,
		HERE,
	],
	[
		/^omp install "git\+https:\/\/example\.com\/you\/pi-a2a-ext\.git#[0-9a-f]+"$/,
		{ by: "test", file: "test/e2e/package/install.test.ts", marker: 'c.text.startsWith("omp install ")' },
	],
	[
		/^node -p 'require\(require\("os"\)\.homedir\(\) \+ "\/\.omp\/plugins\/package\.json"\)/,
		{ by: "test", file: "test/e2e/package/install.test.ts", marker: '"/.omp/plugins/package.json")' },
	],
	[
		/^omp config set collab\.autoStart control$/,
		{ by: "test", file: "test/e2e/host/collab.test.ts", marker: '"config", "set", "collab.autoStart", "control"' },
	],
	[
		/^tmux new -s lab omp --approval-mode always-ask$/,
		{ by: "test", file: "test/e2e/host/collab.test.ts", marker: '"tmux", "new", "-s", "lab"' },
	],
	[/^omp collab list$/, { by: "test", file: "test/e2e/host/collab.test.ts", marker: '"collab", "list"' }],
	[
		/^omp collab link \d+( --view)?$/,
		{ by: "test", file: "test/e2e/host/collab.test.ts", marker: '"collab", "link", String(pid), "--view"' },
	],
	[/^omp join '/, { by: "test", file: "test/e2e/host/collab.test.ts", marker: '"join", control' }],
	[/^claude mcp add /, { by: "test", file: "test/clients/drivers.ts", marker: 'snippet("claude-code", ctx)' }],
	[/^npx mcp-remote /, { by: "not run", why: "npx would fetch mcp-remote from the npm registry; tests stay offline" }],
	[/^ssh -L /, { by: "not run", why: "needs an SSH server (the example's 'labbox')" }],
	[
		/^(git clone \. \/tmp\/scratch |git diff --name-only HEAD~1 \| awk )/,
		{
			by: "not run",
			why: "the architecture page's way to count a change's files in a throwaway clone, run by hand around a change being measured",
		},
	],
	[
		/^(mkdir -p ~\/\.config\/systemd\/user|loginctl enable-linger |systemctl --user |journalctl --user )/,
		{
			by: "not run",
			why: "needs a systemd user manager, which this machine (no systemd as PID 1) lacks; the unit itself is checked by systemd-analyze and its ExecStart run in test/e2e/headless/service.test.ts",
		},
	],
];

/** Pages whose every command runs, in order, in one test of their own (SSH forwards aside). */
const PAGES_RUN_WHOLE: Array<[RegExp, How]> = [
	[/^docs\/(zh\/)?guide\/lab\.md:/, { by: "test", file: "test/e2e/lab/guide.test.ts", marker: '"docs/guide/lab.md"' }],
];
const all = DOC_FILES.flatMap(f => shellBlocks(f).flat());
const howOf = (c: { where: string; text: string }): How | undefined =>
	(c.text.startsWith("ssh -L ") ? undefined : PAGES_RUN_WHOLE.find(([re]) => re.test(c.where))?.[1]) ??
	RULES.find(([re]) => re.test(c.text))?.[1];
/** Blocks this file runs, each once even when two docs (README, README_ZN) carry the same text. */
const blocksStartingWith = (re: RegExp, containing = ""): string[] => [
	...new Set(
		DOC_FILES.filter(f => !PAGES_RUN_WHOLE.some(([page]) => page.test(`${f}:`)))
			.flatMap(shellBlocks)
			.filter(b => b[0] && re.test(b[0].text))
			.map(b => b.map(c => c.text).join("\n"))
			.filter(script => script.includes(containing)),
	),
];

/** The host-side pair (TOKEN and URL read from ~/.omp) on its own, as the first-call section gives it. */
const hostForm = (): string[] =>
	blocksStartingWith(/^TOKEN=\$\(node -e /, "URL=").filter(b => b.split("\n").length === 4);

function bash(script: string, opts: { cwd: string; env: Record<string, string> }) {
	const proc = spawn({
		cmd: ["bash", "-euo", "pipefail", "-c", script],
		cwd: opts.cwd,
		env: {
			PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
			LANG: "C.UTF-8",
			npm_config_update_notifier: "false",
			...opts.env,
		},
		stdout: "pipe",
		stderr: "pipe",
	});
	return Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
}

describe("docs: every shell command has a runner", () => {
	test("each command is run here, by a test or by .ci/run, or listed as not runnable with the reason", () => {
		const unknown = all.filter(c => !howOf(c)).map(c => `${c.where}: ${c.text}`);
		expect(unknown).toEqual([]);
		const notRun = all.filter(c => howOf(c)?.by === "not run").map(c => c.text.split(" ").slice(0, 2).join(" "));
		expect([...new Set(notRun)].sort()).toEqual([
			"git clone",
			"git diff",
			"journalctl --user",
			"loginctl enable-linger",
			"mkdir -p",
			"npx mcp-remote",
			"ssh -L",
			"systemctl --user",
		]);
	});

	test("commands credited to .ci/run or to a test appear there", () => {
		const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
		for (const c of all) {
			const how = howOf(c);
			if (how?.by === "ci" && c.text !== ".ci/run") {
				for (const part of c.text.split(" && ")) expect(ci, `${c.where}: ${part}`).toContain(part);
			}
			if (how?.by === "test") expect(readFileSync(join(ROOT, how.file), "utf8")).toContain(how.marker);
		}
	});
});

describe("docs: commands run against a real host", () => {
	let host: Host;
	let work: string;

	beforeAll(async () => {
		host = await Host.start();
		work = mkdtempSync(join(tmpdir(), "a2a-docs-"));
		// The docs read the runtime file, written just after the port opens (which is what start waits for).
		const runtime = join(host.home, ".omp", "agent", "a2a-bridge.runtime.json");
		await waitFor(`${runtime} to be written`, () => existsSync(runtime), { timeoutMs: 10_000 });
	}, 90_000);

	afterAll(async () => {
		await host.stop();
		host.cleanup();
		rmSync(work, { recursive: true, force: true });
	});

	test("audit: the jq command lists exactly the call that has a start but no done", async () => {
		const scripts = blocksStartingWith(/^cat ~\/\.omp\/agent\/a2a-bridge\.log\.1 /);
		expect(scripts.length).toBeGreaterThan(0);
		const home = join(work, "audit-home");
		mkdirSync(join(home, ".omp", "agent"), { recursive: true });
		const rec = (id: string, phase: string, ts: string) =>
			`${JSON.stringify({ ts, id, sid: null, phase, tool: "bash", args: "{}" })}\n`;
		writeFileSync(join(home, ".omp", "agent", "a2a-bridge.log.1"), rec("a", "start", "T1") + rec("a", "done", "T2"));
		writeFileSync(join(home, ".omp", "agent", "a2a-bridge.log"), rec("b", "start", "T3") + rec("c", "start", "T4"));
		writeFileSync(join(home, ".omp", "agent", "a2a-bridge.log"), rec("c", "done", "T5"), { flag: "a" });
		// Calls refused before they began (coalesced `refused` records) and /blob records never hang.
		writeFileSync(join(home, ".omp", "agent", "a2a-bridge.log"), rec("d", "refused", "T6") + rec("e", "done", "T7"), {
			flag: "a",
		});
		for (const script of scripts) {
			const [code, out, err] = await bash(script, { cwd: work, env: { HOME: home } });
			expect({ code, err }).toEqual({ code: 0, err: "" });
			expect(out).toBe("T3 bash b\n");
		}
	});

	test("first call with curl, both ends: the laptop form (pasted token, forwarded URL) and the host form", async () => {
		const [walk, ...moreWalks] = blocksStartingWith(/^AUTH=/, '"method":"initialize"');
		const [laptop, ...moreLaptops] = blocksStartingWith(/^TOKEN='<paste the token>'$/);
		const [onHost, ...moreHosts] = hostForm();
		expect([moreWalks, moreLaptops, moreHosts]).toEqual([[], [], []]);
		expect([walk, laptop, onHost].every(b => b !== undefined)).toBe(true);
		// The laptop form runs with no ~/.omp at all: only the pasted token and the forwarded port are substituted.
		const bare = join(work, "laptop-home");
		mkdirSync(bare, { recursive: true });
		const pasted = (laptop as string)
			.replace("<paste the token>", host.token)
			.replace("http://127.0.0.1:8765/", host.url);
		for (const [script, home] of [
			[`${pasted}\n${walk}`, bare],
			[`${onHost}\n${walk}`, host.home],
		] as const) {
			rmSync(join(work, "headers.txt"), { force: true });
			const [code, out, err] = await bash(script, { cwd: work, env: { HOME: home } });
			expect({ code, err }).toEqual({ code: 0, err: "" });
			expect(out).toContain('"result":{"protocolVersion":"2025-11-25"');
			expect(out).toMatch(/^(\S+ )*bash( \S+)*$/m);
			expect(out).toContain(`"text":"hello from ${hostname()}\\n`);
			// The last line ended the session: its id is refused now.
			const sid = /^mcp-session-id: (\S+)/im.exec(readFileSync(join(work, "headers.txt"), "utf8"))?.[1] ?? "";
			const after = await fetch(host.url, {
				method: "POST",
				headers: host.headers({ "mcp-session-id": sid }),
				body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
			});
			expect(after.status).toBe(404);
		}
	});

	test("Tasks by curl (README and README_ZN, both long-work pages): create, poll, result, cancel, as written", async () => {
		const blocks = blocksStartingWith(/^AUTH=/, "tasks/get");
		expect(blocks.length).toBe(1);
		const [onHost] = hostForm();
		const audit = join(host.home, ".omp", "agent", "a2a-bridge.log");
		const before = readFileSync(audit, "utf8").split("\n").length;
		const [code, out, err] = await bash(`${onHost}\n${blocks[0]}`, { cwd: work, env: { HOME: host.home } });
		expect({ code, err }).toEqual({ code: 0, err: "" });
		const lines = out.trim().split("\n");
		expect(lines.slice(0, 2)).toEqual(["completed", "built"]);
		expect(lines.at(-1)).toContain('"status":"cancelled"');
		// Second channel: the audit says both calls ran as tasks; the first ended, the second was cancelled, and
		// nothing of the cancelled command is left running.
		const taskDone = (): Array<{ cancelled?: boolean }> =>
			readFileSync(audit, "utf8")
				.split("\n")
				.slice(before - 1)
				.filter(l => l.includes('"phase":"done"') && l.includes('"task":'))
				.map(l => JSON.parse(l) as { cancelled?: boolean });
		await waitFor("both task calls' done records", () => taskDone().length === 2, { timeoutMs: 10_000 });
		expect(taskDone().map(r => r.cancelled === true)).toEqual([false, true]);
		const sleeping = (): string[] =>
			readdirSync("/proc")
				.filter(p => /^\d+$/.test(p))
				.filter(p => {
					try {
						return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").trim() === "sleep 600";
					} catch {
						return false;
					}
				});
		await waitFor("the cancelled task's sleep to be gone", () => sleeping().length === 0, { timeoutMs: 10_000 });
	}, 60_000);

	test("the host form without its files stops at once with one sentence, running nothing after it", async () => {
		const [onHost] = hostForm();
		const [walk] = blocksStartingWith(/^AUTH=/, '"method":"initialize"');
		const empty = join(work, "empty-home");
		mkdirSync(join(empty, ".omp", "agent"), { recursive: true });
		const noConfig = await bash(`${onHost}\n${walk}`, { cwd: work, env: { HOME: empty } });
		expect(noConfig).toEqual([
			1,
			"",
			`no ${join(empty, ".omp", "agent", "a2a-bridge.json")}: run this on the host, or paste TOKEN\n`,
		]);
		// A config but no running host: the URL line says so.
		writeFileSync(join(empty, ".omp", "agent", "a2a-bridge.json"), JSON.stringify({ token: "t".repeat(43) }));
		const noHost = await bash(`${onHost}\n${walk}`, { cwd: work, env: { HOME: empty } });
		const record = join(empty, ".omp", "agent", "a2a-bridge.runtime.json");
		expect(noHost).toEqual([1, "", `no host recorded in ${record}: start one, or paste URL\n`]);
		// The walkthrough itself refuses an unset TOKEN with one sentence rather than sending an empty Bearer.
		const unset = await bash(walk as string, { cwd: work, env: { HOME: empty } });
		expect(unset[0]).not.toBe(0);
		expect(unset[1]).toBe("");
		expect(unset[2]).toContain("TOKEN: set TOKEN first");
	});

	test("npm run token: the README's lines against the running host (list, add, rotate, revoke), applied live", async () => {
		const lines = [...new Set(all.map(c => c.text).filter(t => t.startsWith("npm run token -- ")))];
		const block = blocksStartingWith(/^npm run token -- list/);
		expect(block.length).toBe(1);
		expect(lines.every(l => (block[0] as string).split("\n").includes(l))).toBe(true);
		const [code, out, err] = await bash(block[0] as string, { cwd: ROOT, env: { HOME: host.home } });
		expect({ code, err }).toEqual({ code: 0, err: "" });
		const secrets = out.split("\n").filter(l => /^[A-Za-z0-9_-]{43}$/.test(l));
		expect(secrets.length).toBe(2);
		expect(out).not.toContain(host.token);
		expect(out).toContain(`the running host (pid ${host.proc.pid} at ${host.url}) apply it within a second`);
		// Second channel: the host took each change live; the end state is the revoke.
		const deadline = Date.now() + 10_000;
		const bearer = async (t: string) =>
			(await fetch(host.url, { method: "POST", headers: { authorization: `Bearer ${t}` }, body: "{}" })).status;
		while (Date.now() < deadline && !host.notifications().some(m => m.includes("token 'laptop' revoked"))) {
			await Bun.sleep(50);
		}
		expect(host.notifications()).toContain("A2A bridge: config edit applied: token 'laptop' added");
		for (const s of secrets) expect(await bearer(s)).toBe(401);
		expect(JSON.parse(readFileSync(join(host.home, ".omp", "agent", "a2a-bridge.json"), "utf8")).tokens).toEqual([]);
	});

	test("/blob: replace with a digest, resume line, download with its digest, as written", async () => {
		const scripts = blocksStartingWith(/^TOKEN=/, "blob?path=");
		expect(scripts.length).toBeGreaterThan(0);
		const bytes = crypto.getRandomValues(new Uint8Array(300_000));
		const digest = `sha-256=:${new Bun.CryptoHasher("sha256").update(bytes).digest("base64")}:`;
		for (const script of scripts) {
			writeFileSync(join(work, "fw.bin"), bytes);
			mkdirSync(join(host.home, "incoming"), { recursive: true });
			// A first version is there: the README's line replaces it, never appends.
			writeFileSync(join(host.home, "incoming", "fw.bin"), "version one");
			const [code, out, err] = await bash(script, { cwd: work, env: { HOME: host.home } });
			expect({ code, err }).toEqual({ code: 0, err: "" });
			expect(out).toContain('"size":300000');
			expect(out).not.toContain('"code"');
			expect(out.toLowerCase()).toContain(`repr-digest: ${digest.toLowerCase()}`);
			expect(new Uint8Array(readFileSync(join(host.home, "incoming", "fw.bin")))).toEqual(bytes);
			expect(new Uint8Array(readFileSync(join(work, "fw.bin")))).toEqual(bytes);
		}
	});

	test("/host-llm: the curl line switches host inference off", async () => {
		const scripts = blocksStartingWith(/^TOKEN=/, "host-llm");
		expect(scripts.length).toBeGreaterThan(0);
		for (const script of scripts) {
			const [code, out, err] = await bash(script, { cwd: work, env: { HOME: host.home } });
			expect({ code, err }).toEqual({ code: 0, err: "" });
			expect(JSON.parse(out)).toMatchObject({ enabled: false });
		}
	});
});

describe("docs: the headless host commands", () => {
	test("each `npm run host` line serves, answers `npm run probe` and stops on Ctrl-C", async () => {
		const cmds = [...new Set(all.map(c => c.text))];
		const hosts = cmds.filter(t => t.startsWith("npm run host -- "));
		const probe = cmds.find(t => t.startsWith("npm run probe -- "));
		expect(hosts.length).toBeGreaterThan(0);
		expect(probe).toBeDefined();
		for (const line of hosts) {
			const home = mkdtempSync(join(tmpdir(), "a2a-docs-host-"));
			mkdirSync(join(home, "project"));
			mkdirSync(join(home, ".omp", "agent"), { recursive: true });
			writeFileSync(join(home, ".omp", "agent", "models.yml"), PLACEHOLDER_MODELS);
			const env: Record<string, string> = {
				HOME: home,
				PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
				npm_config_update_notifier: "false",
			};
			// The read-only recipe makes the laptop's token first (`npm run token -- add laptop`), before any host
			// ran; the probes below then call with that token, and the audit must name it.
			const recipe = DOC_FILES.flatMap(shellBlocks).find(bl => bl.some(c => c.text === line));
			const addLine = recipe?.find(c => c.text.startsWith("npm run token -- add "))?.text;
			const tokenName = addLine?.split(" ")[5];
			if (addLine) {
				const [addCode, addOut, addErr] = await bash(addLine, { cwd: ROOT, env });
				expect({ addCode, addErr }).toEqual({
					addCode: 0,
					addErr: `token: created ${join(home, ".omp", "agent", "a2a-bridge.json")} with a new token\n`,
				});
				env.A2A_BRIDGE_TOKEN = addOut.trim().split("\n").at(-1) ?? "";
				writeFileSync(
					join(home, ".omp", "agent", "a2a-bridge.json"),
					JSON.stringify({
						...JSON.parse(readFileSync(join(home, ".omp", "agent", "a2a-bridge.json"), "utf8")),
						blob: "read",
					}),
				);
			}
			// Its own process group, so SIGINT reaches npm and the host script together, as Ctrl-C does.
			const proc = spawn({ cmd: ["bash", "-c", line], cwd: ROOT, env, stdout: "pipe", stderr: "pipe", detached: true });
			let out = "";
			const reading = (async () => {
				const decoder = new TextDecoder();
				for await (const chunk of proc.stdout) out += decoder.decode(chunk, { stream: true });
			})();
			try {
				await waitFor("the URL line or an exit", () => /^ {2}URL: /m.test(out) || proc.exitCode !== null, {
					timeoutMs: 60_000,
					everyMs: 100,
					seen: () => out,
				});
				const url = out.match(/^ {2}URL: +(\S+)/m)?.[1];
				expect(url, `${line}\n${out}`).toBeDefined();
				const [probeCode, probeOut, probeErr] = await bash(
					(probe as string).replace("http://127.0.0.1:8765/", url as string),
					{ cwd: ROOT, env },
				);
				// Bare, as the quick start gives it: the URL comes from the runtime file.
				const [bareCode, bareOut, bareErr] = await bash("npm run probe", { cwd: ROOT, env });
				expect(bareOut).toContain(`probe: ${url} (from ${join(home, ".omp", "agent", "a2a-bridge.runtime.json")})`);
				// The probe's verdict is its exit code: 0 only when the echo came back. The line that makes omp
				// ask for every tool while the headless host denies must get the refusal, visibly.
				const report = `${line}\nprobe exit ${probeCode}\n${probeOut}${probeErr}\nbare probe exit ${bareCode}\n${bareOut}${bareErr}\nhost:\n${out}`;
				const denies = /--approvals deny .*--approval-mode always-ask/.test(line);
				for (const [code, text] of [
					[probeCode, probeOut],
					[bareCode, bareOut],
				] as const) {
					if (denies) {
						expect(code, report).toBe(1);
						expect(text, report).toMatch(/^probe: tools\/call bash "echo a2a-probe-\d+" -> error: Tool call denied/m);
					} else {
						expect(code, report).toBe(0);
						expect(text, report).toMatch(/^probe: tools\/call bash "echo (a2a-probe-\d+)" -> \1$/m);
					}
				}
				process.kill(-proc.pid, "SIGINT");
				// npm exits 130 when the SIGINT reaches it too; the host script's verdict is its last line.
				expect([0, 130]).toContain(await proc.exited);
				await reading;
				if (denies) expect(out).toMatch(/^approval: bash .* -> Deny \(--approvals deny\)$/m);
				if (tokenName) {
					const audit = readFileSync(join(home, ".omp", "agent", "a2a-bridge.log"), "utf8");
					expect(audit).toContain(`"token":"${tokenName}"`);
					expect(out).toContain("blob=read");
				}
				expect(out).toMatch(/omp shut down \(exit 0\); port \d+ released; no process left/);
				if (line.includes("--cwd ~/project")) expect(out).toContain(`serving ${join(home, "project")}`);
			} finally {
				try {
					process.kill(-proc.pid, "SIGKILL");
				} catch {
					// Already gone: the group ended with the host.
				}
				rmSync(home, { recursive: true, force: true });
			}
		}
	}, 120_000);
});
