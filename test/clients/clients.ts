/**
 * The client matrix: each client people run, pinned, with where it installs and the era it is known
 * to speak by default. `npm run test:clients` installs them into a cache outside the checkout
 * (reused when the pinned version is there) and drives each one against a real host.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { claudeCode, codex, copilotCli, type Driver, geminiCli, library, opencode } from "./drivers.ts";

export interface MatrixClient {
	id: string;
	title: string;
	/** Install folder under the cache; several clients may share one (the libraries). */
	dir: string;
	/** npm specs, exact versions. */
	packages: string[];
	era: "2025" | "2026-07-28";
	driver: Driver;
}

const LIBS = [
	"ai@7.0.173",
	"@ai-sdk/mcp@2.0.99",
	"@langchain/mcp-adapters@1.1.4",
	"@langchain/core@1.4.0",
	"@modelcontextprotocol/client@2.4.0",
];

export const CLIENTS: MatrixClient[] = [
	{
		id: "claude-code",
		title: "Claude Code",
		dir: "claude-code",
		packages: ["@anthropic-ai/claude-code@2.1.332"],
		era: "2026-07-28",
		driver: claudeCode,
	},
	{
		id: "codex",
		title: "Codex CLI",
		dir: "codex",
		packages: ["@openai/codex@0.171.0"],
		era: "2025",
		driver: codex(false),
	},
	{
		id: "codex-2026",
		title: "Codex CLI (mcp_2026_07_28 flag)",
		dir: "codex",
		packages: ["@openai/codex@0.171.0"],
		era: "2026-07-28",
		driver: codex(true),
	},
	{
		id: "gemini",
		title: "Gemini CLI",
		dir: "gemini",
		packages: ["@google/gemini-cli@0.61.0"],
		era: "2025",
		driver: geminiCli,
	},
	{
		id: "copilot",
		title: "GitHub Copilot CLI (offline, own key)",
		dir: "copilot",
		packages: ["@github/copilot@1.0.102"],
		era: "2026-07-28",
		driver: copilotCli,
	},
	{
		id: "opencode",
		title: "opencode",
		dir: "opencode",
		packages: ["opencode-ai@1.18.33"],
		era: "2025",
		driver: opencode,
	},
	{
		id: "ai-sdk",
		title: "Vercel AI SDK (@ai-sdk/mcp)",
		dir: "libs",
		packages: LIBS,
		era: "2026-07-28",
		driver: library("ai-sdk"),
	},
	{
		id: "langchain",
		title: "LangChain (@langchain/mcp-adapters)",
		dir: "libs",
		packages: LIBS,
		era: "2025",
		driver: library("langchain"),
	},
	{
		id: "ts-sdk-2",
		title: "TypeScript SDK 2 (versionNegotiation auto)",
		dir: "libs",
		packages: LIBS,
		era: "2026-07-28",
		driver: library("ts-sdk-2"),
	},
];

/** Outside the checkout, so a fresh clone reuses what an earlier run installed. */
const CACHE = process.env.A2A_CLIENTS_CACHE || join(homedir(), ".cache", "pi-a2a-ext", "clients");

const stamp = (dir: string): string => join(CACHE, dir, ".matrix-installed");
const failure = (dir: string): string => join(CACHE, dir, ".matrix-failed");

/** Why a client cannot run here (its install failed), or null when it is installed at its pinned versions. */
export function unavailable(c: MatrixClient): string | null {
	const want = c.packages.join(" ");
	if (existsSync(stamp(c.dir)) && readFileSync(stamp(c.dir), "utf8") === want) return null;
	if (existsSync(failure(c.dir))) return readFileSync(failure(c.dir), "utf8").trim() || "install failed";
	return "not installed (run `npm run test:clients`, which installs the pinned clients first)";
}

export const binOf =
	(c: MatrixClient) =>
	(name: string): string =>
		join(CACHE, c.dir, "node_modules", ".bin", name);

/** Installs every client folder whose stamp does not match its pinned packages; records failures with the reason. */
export async function installAll(log: (line: string) => void): Promise<void> {
	const seen = new Set<string>();
	for (const c of CLIENTS) {
		if (seen.has(c.dir)) continue;
		seen.add(c.dir);
		const want = c.packages.join(" ");
		if (unavailable(c) === null) {
			log(`clients: ${c.dir}: cached (${want})`);
			continue;
		}
		const dir = join(CACHE, c.dir);
		mkdirSync(dir, { recursive: true });
		log(`clients: ${c.dir}: installing ${want}`);
		const p = Bun.spawn(
			["npm", "install", "--prefix", dir, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", ...c.packages],
			{ stdout: "pipe", stderr: "pipe", timeout: 10 * 60_000 },
		);
		const [, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
		if ((await p.exited) === 0) {
			writeFileSync(stamp(c.dir), want);
			try {
				Bun.spawnSync(["rm", "-f", failure(c.dir)]);
			} catch {}
		} else {
			const reason = `npm install failed (exit ${p.exitCode}): ${err.split("\n").filter(Boolean).slice(-3).join(" / ")}`;
			writeFileSync(failure(c.dir), reason);
			log(`clients: ${c.dir}: ${reason}`);
		}
	}
}
