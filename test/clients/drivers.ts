/**
 * How each client in the matrix is set up and run, the way its own docs say: a config file or its own
 * `mcp add` command with the token header, and one non-interactive run against the scripted model.
 * A driver only runs the client; the matrix checks the marker file, the audit and the wire.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface DriverContext {
	/** The client's own HOME (a throwaway dir) and working directory. */
	home: string;
	cwd: string;
	/** The bridge's MCP URL (through the wire recorder) and the Bearer secret to configure. */
	url: string;
	secret: string;
	/** The scripted model's base URL (`http://127.0.0.1:PORT`). */
	model: string;
	/** Where the client's installed package lives (its `node_modules/.bin`). */
	bin: (name: string) => string;
	/** The shell command the client is to run through the bridge (library clients call it directly). */
	command: string;
	/** The MCP server name the client is told to use (tool names derive from it). */
	server: string;
}

interface Run {
	cmd: string[];
	env: Record<string, string>;
	/** Bound for one run of the client (ms). */
	timeoutMs: number;
	/**
	 * The client's own status command (`mcp list`): an agent CLI whose server fails to connect still
	 * runs its turn without the tools and says nothing, so this is where a user sees the failure.
	 */
	status?: string[];
}

export interface Driver {
	/** Writes config files or runs the client's own setup command; returns the run. */
	prepare(ctx: DriverContext): Promise<Run>;
}

const DOCS = join(import.meta.dir, "..", "..", "docs", "guide", "clients.md");
const DOC_URL = "http://127.0.0.1:8765/mcp";
const DOC_TOKEN = "<token>";
const DOC_COMMAND = "uname -a";

/**
 * The snippet docs/guide/clients.md shows for a client (the fenced block after `<!-- matrix: ID … -->`),
 * with the documented URL and token (and the library examples' command) replaced: the only edits.
 */
function snippet(id: string, ctx: { url: string; secret: string; command?: string }): { file?: string; text: string } {
	const doc = readFileSync(DOCS, "utf8");
	const m = new RegExp(`<!-- matrix: ${id}( file=(\\S+))? -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
	if (!m) throw new Error(`docs/guide/clients.md has no snippet marked 'matrix: ${id}'`);
	let text = (m[3] ?? "").replaceAll(DOC_URL, ctx.url).replaceAll(DOC_TOKEN, ctx.secret);
	if (ctx.command !== undefined) text = text.replaceAll(DOC_COMMAND, ctx.command);
	return { ...(m[2] ? { file: m[2] } : {}), text };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The documented JSON file with the test's own settings (model provider, trust) merged in beside it. */
function mergeJson(doc: string, extra: Record<string, unknown>): string {
	const out = JSON.parse(doc) as Record<string, unknown>;
	for (const [k, v] of Object.entries(extra)) out[k] = isObject(out[k]) && isObject(v) ? { ...out[k], ...v } : v;
	return JSON.stringify(out, null, 2);
}

const baseEnv = (ctx: DriverContext): Record<string, string> => ({
	PATH: process.env.PATH ?? "/usr/bin:/bin",
	HOME: ctx.home,
	LANG: "C.UTF-8",
	TERM: "dumb",
	NO_COLOR: "1",
	CI: "1",
});

async function exec(cmd: string[], env: Record<string, string>, cwd: string): Promise<void> {
	const p = Bun.spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 120_000 });
	const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
	if ((await p.exited) !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} exited ${p.exitCode}: ${out}${err}`);
}

const write = (path: string, text: string): void => {
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, text, { mode: 0o600 });
};

/** Claude Code: the documented `claude mcp add …`, then `claude -p`. */
export const claudeCode: Driver = {
	async prepare(ctx) {
		const claude = ctx.bin("claude");
		const env = {
			...baseEnv(ctx),
			PATH: `${join(claude, "..")}:${baseEnv(ctx).PATH}`,
			ANTHROPIC_BASE_URL: ctx.model,
			ANTHROPIC_API_KEY: "sk-stub",
			DISABLE_TELEMETRY: "1",
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
			// With many MCP tools Claude Code defers them behind its ToolSearch; the stub wants them listed.
			ENABLE_TOOL_SEARCH: "false",
		};
		await exec(["sh", "-ec", snippet("claude-code", ctx).text], env, ctx.cwd);
		return {
			cmd: [claude, "-p", "Run the command.", "--allowedTools", `mcp__${ctx.server}__bash`],
			status: [claude, "mcp", "list"],
			env,
			timeoutMs: 90_000,
		};
	},
};

/** Codex: the documented `[mcp_servers.omp_host]` after the stub's model provider, then `codex exec`. */
export const codex = (era2026: boolean): Driver => ({
	async prepare(ctx) {
		const doc = snippet("codex", ctx);
		const provider = [
			`model = "gpt-5.4"`,
			`model_provider = "stub"`,
			`approval_policy = "never"`,
			`sandbox_mode = "danger-full-access"`,
			"",
			"[model_providers.stub]",
			`name = "stub"`,
			`base_url = "${ctx.model}/v1"`,
			`wire_api = "responses"`,
			`env_key = "STUB_API_KEY"`,
			"",
		].join("\n");
		write(join(ctx.home, doc.file ?? ".codex/config.toml"), `${provider}\n${doc.text}\n`);
		const env = {
			...baseEnv(ctx),
			CODEX_HOME: join(ctx.home, ".codex"),
			STUB_API_KEY: "stub",
			OMP_HOST_TOKEN: ctx.secret,
		};
		const flag = era2026 ? ["--enable", "mcp_2026_07_28"] : [];
		return {
			cmd: [ctx.bin("codex"), "exec", ...flag, "--skip-git-repo-check", "Run the command."],
			env,
			timeoutMs: 90_000,
		};
	},
});

/** Gemini CLI: the documented settings.json (plus the stub's key and folder trust), then `gemini -p`. */
export const geminiCli: Driver = {
	async prepare(ctx) {
		const doc = snippet("gemini", ctx);
		const extra = {
			security: { auth: { selectedType: "gemini-api-key" } },
			privacy: { usageStatisticsEnabled: false },
			general: { disableAutoUpdate: true, disableUpdateNag: true },
		};
		write(join(ctx.home, doc.file ?? ".gemini/settings.json"), mergeJson(doc.text, extra));
		const env = {
			...baseEnv(ctx),
			GEMINI_API_KEY: "stub",
			GOOGLE_GEMINI_BASE_URL: ctx.model,
			GEMINI_CLI_TRUST_WORKSPACE: "true",
		};
		return {
			cmd: [ctx.bin("gemini"), "-p", "Run the command.", "--approval-mode", "yolo", "-m", "gemini-2.5-flash"],
			status: [ctx.bin("gemini"), "mcp", "list"],
			env,
			timeoutMs: 90_000,
		};
	},
};

/** GitHub Copilot CLI, offline bring-your-own-key mode: the documented mcp-config.json, then `copilot -p`. */
export const copilotCli: Driver = {
	async prepare(ctx) {
		const doc = snippet("copilot", ctx);
		write(join(ctx.home, doc.file ?? ".copilot/mcp-config.json"), doc.text);
		const env = {
			...baseEnv(ctx),
			COPILOT_OFFLINE: "true",
			COPILOT_AUTO_UPDATE: "false",
			COPILOT_PROVIDER_BASE_URL: `${ctx.model}/v1`,
			COPILOT_PROVIDER_TYPE: "openai",
			COPILOT_PROVIDER_API_KEY: "stub",
			COPILOT_MODEL: "gpt-4.1",
		};
		return {
			cmd: [ctx.bin("copilot"), "-p", "Run the command.", "--allow-all-tools", "--no-auto-update"],
			// `-p` and `copilot mcp list` say nothing of a refused server; its log file names the 401.
			status: ["sh", "-c", 'cat "$HOME"/.copilot/logs/*.log'],
			env,
			timeoutMs: 90_000,
		};
	},
};

/** opencode: the documented opencode.json (plus the stub as its provider), then `opencode run`. */
export const opencode: Driver = {
	async prepare(ctx) {
		const doc = snippet("opencode", ctx);
		const extra = {
			provider: {
				stub: {
					npm: "@ai-sdk/openai-compatible",
					name: "stub",
					options: { baseURL: `${ctx.model}/v1`, apiKey: "stub" },
					models: { "stub-model": { name: "stub-model", tool_call: true } },
				},
			},
			model: "stub/stub-model",
			permission: { "*": "allow" },
			autoupdate: false,
			share: "disabled",
		};
		write(join(ctx.home, doc.file ?? ".config/opencode/opencode.json"), mergeJson(doc.text, extra));
		const env = { ...baseEnv(ctx), OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "true" };
		const bin = ctx.bin("opencode");
		return { cmd: [bin, "run", "Run the command."], status: [bin, "mcp", "list"], env, timeoutMs: 90_000 };
	},
};

/**
 * A library client: its docs/guide/clients.md example, written next to the installed packages (Node resolves
 * imports from the script's own folder) and run with Node, as an app using the library would.
 */
export const library = (id: string): Driver => ({
	async prepare(ctx) {
		const dst = ctx.bin(`../../matrix-${id}.mjs`);
		writeFileSync(dst, snippet(id, ctx).text);
		return { cmd: ["node", dst], env: baseEnv(ctx), timeoutMs: 60_000 };
	},
});
