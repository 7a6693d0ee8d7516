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

const baseEnv = (ctx: DriverContext): Record<string, string> => ({
	PATH: process.env.PATH ?? "/usr/bin:/bin",
	HOME: ctx.home,
	LANG: "C.UTF-8",
	TERM: "dumb",
	NO_COLOR: "1",
	CI: "1",
});

async function exec(cmd: string[], env: Record<string, string>, cwd: string): Promise<void> {
	const p = Bun.spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 60_000 });
	const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
	if ((await p.exited) !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} exited ${p.exitCode}: ${out}${err}`);
}

const write = (path: string, text: string): void => {
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, text, { mode: 0o600 });
};

/** Claude Code: `claude mcp add --transport http NAME URL --header "Authorization: Bearer …"`, then `claude -p`. */
export const claudeCode: Driver = {
	async prepare(ctx) {
		const env = {
			...baseEnv(ctx),
			ANTHROPIC_BASE_URL: ctx.model,
			ANTHROPIC_API_KEY: "sk-stub",
			DISABLE_TELEMETRY: "1",
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
			// With many MCP tools Claude Code defers them behind its ToolSearch; the stub wants them listed.
			ENABLE_TOOL_SEARCH: "false",
		};
		const claude = ctx.bin("claude");
		await exec(
			[
				claude,
				"mcp",
				"add",
				"--transport",
				"http",
				ctx.server,
				ctx.url,
				"--header",
				`Authorization: Bearer ${ctx.secret}`,
			],
			env,
			ctx.cwd,
		);
		return {
			cmd: [claude, "-p", "Run the command.", "--allowedTools", `mcp__${ctx.server}__bash`],
			status: [claude, "mcp", "list"],
			env,
			timeoutMs: 90_000,
		};
	},
};

/** Codex: `[mcp_servers.NAME] url, bearer_token_env_var` in ~/.codex/config.toml, then `codex exec`. */
export const codex = (era2026: boolean): Driver => ({
	async prepare(ctx) {
		const toml = [
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
			`[mcp_servers.${ctx.server}]`,
			`url = "${ctx.url}"`,
			`bearer_token_env_var = "A2A_SECRET"`,
			"startup_timeout_sec = 60",
			"required = true",
			...(era2026 ? ["", "[features]", "mcp_2026_07_28 = true"] : []),
			"",
		].join("\n");
		write(join(ctx.home, ".codex", "config.toml"), toml);
		const env = { ...baseEnv(ctx), CODEX_HOME: join(ctx.home, ".codex"), STUB_API_KEY: "stub", A2A_SECRET: ctx.secret };
		return {
			cmd: [ctx.bin("codex"), "exec", "--skip-git-repo-check", "Run the command."],
			env,
			timeoutMs: 90_000,
		};
	},
});

/** Gemini CLI: `mcpServers.NAME.httpUrl` + `headers` in ~/.gemini/settings.json, then `gemini -p`. */
export const geminiCli: Driver = {
	async prepare(ctx) {
		const settings = {
			mcpServers: {
				[ctx.server]: { httpUrl: ctx.url, headers: { Authorization: `Bearer ${ctx.secret}` }, trust: true },
			},
			security: { auth: { selectedType: "gemini-api-key" } },
			privacy: { usageStatisticsEnabled: false },
			general: { disableAutoUpdate: true, disableUpdateNag: true },
		};
		write(join(ctx.home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
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

/** GitHub Copilot CLI, offline bring-your-own-key mode: ~/.copilot/mcp-config.json, then `copilot -p`. */
export const copilotCli: Driver = {
	async prepare(ctx) {
		const mcp = {
			mcpServers: {
				[ctx.server]: { type: "http", url: ctx.url, headers: { Authorization: `Bearer ${ctx.secret}` }, tools: ["*"] },
			},
		};
		write(join(ctx.home, ".copilot", "mcp-config.json"), JSON.stringify(mcp, null, 2));
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

/** opencode: `mcp.NAME {type: "remote", url, headers}` in its opencode.json, then `opencode run`. */
export const opencode: Driver = {
	async prepare(ctx) {
		const config = {
			provider: {
				stub: {
					npm: "@ai-sdk/openai-compatible",
					name: "stub",
					options: { baseURL: `${ctx.model}/v1`, apiKey: "stub" },
					models: { "stub-model": { name: "stub-model", tool_call: true } },
				},
			},
			model: "stub/stub-model",
			mcp: {
				[ctx.server]: {
					type: "remote",
					url: ctx.url,
					headers: { Authorization: `Bearer ${ctx.secret}` },
					enabled: true,
				},
			},
			permission: { "*": "allow" },
			autoupdate: false,
			share: "disabled",
		};
		write(join(ctx.home, ".config", "opencode", "opencode.json"), JSON.stringify(config, null, 2));
		const env = { ...baseEnv(ctx), OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "true" };
		const bin = ctx.bin("opencode");
		return { cmd: [bin, "run", "Run the command."], status: [bin, "mcp", "list"], env, timeoutMs: 90_000 };
	},
};

/**
 * A library client: one of test/clients/libs/*.mjs, copied next to the installed packages (Node
 * resolves imports from the script's own folder) and run with Node, as an app using the library would.
 */
export const library = (script: string): Driver => ({
	async prepare(ctx) {
		const src = join(import.meta.dir, "libs", script);
		const dst = ctx.bin(`../../${script}`);
		writeFileSync(dst, readFileSync(src));
		return {
			cmd: ["node", dst, ctx.url, ctx.secret, ctx.command],
			env: baseEnv(ctx),
			timeoutMs: 60_000,
		};
	},
});
