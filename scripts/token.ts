/**
 * `npm run token -- list | add NAME | revoke NAME | rotate [NAME]`: the bridge's tokens without a TUI.
 * Edits the config (`A2A_BRIDGE_CONFIG`, else ~/.omp/agent/a2a-bridge.json; a link is followed to the file
 * it reaches, as a host does) through the same file code as `/a2a token …`: validated, 0600, written whole
 * and synced under the config's lock, the table read and the name looked up under that lock. A new secret
 * is printed once, on stdout, only after the file holds it; `list` shows names and prefixes only. Running hosts watch the file and apply the change within a second;
 * the command says which hosts those are, and when the file could not be written, that they did not.
 */
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { defaultConfigPath } from "../src/config/config.ts";
import { addToken, loadConfig, readConfig, revokeToken, rotateToken } from "../src/config/file.ts";
import { urlHost } from "../src/config/hosts.ts";
import { configName } from "../src/config/paths.ts";
import { readLiveRuntime, runtimePath } from "../src/config/runtime.ts";
import { nameProblem, OWNER } from "../src/config/tokens.ts";
import { TOKEN_PLACEHOLDER } from "../src/headless/frames.ts";
import { machineIdFile, readBoxTag } from "../src/host/box-tag.ts";
import { entryName, mcpJson, tokenPrefix } from "../src/host/commands.ts";

const USAGE = `usage: npm run token -- list | add NAME | revoke NAME | rotate [NAME]
  list          every token's name and prefix (never a secret)
  add NAME      a new named token (NAME: 1-32 of a-z 0-9 _ -); its secret is printed once
  revoke NAME   removes it; a running host ends its sessions and calls at once
  rotate [NAME] a new secret for NAME (default: the owner token); the old one stops working`;

const out = (line: string): void => {
	process.stdout.write(`${line}\n`);
};

/** What a revoke or rotate that did not reach the file leaves behind: every running host still takes the old secret. */
function stillLive(path: string, name: string): string {
	const r = readLiveRuntime(runtimePath(path));
	const n = r.kind === "ok" ? r.entries.length : 0;
	if (n === 0) return `token '${name}' is unchanged`;
	return `token '${name}' is unchanged and the running host${n > 1 ? "s" : ""} still accept its secret; /a2a token revoke ${name} or /a2a rotate ${name} inside a host applies there at once, file or not`;
}

/** When the change takes effect, from the runtime record next to the config. */
function whenApplied(path: string): string {
	const r = readLiveRuntime(runtimePath(path));
	const hosts = r.kind === "ok" ? r.entries : [];
	if (hosts.length === 0) return `no host runs on ${path}; the next start uses it`;
	const list = hosts.map(h => `pid ${h.pid} at ${h.url}`).join(", ");
	return `the running host${hosts.length > 1 ? "s" : ""} (${list}) apply it within a second (watching ${path})`;
}

/** The entry `/a2a mcp-json` prints (its key from entryName), secret left out; none while no port is known yet. */
function entryFor(path: string): string | undefined {
	const { config } = readConfig(path);
	const r = readLiveRuntime(runtimePath(path));
	const live = r.kind === "ok" ? r.entries[0] : undefined;
	const port = config.port || live?.port;
	if (!port) return undefined;
	const url = live?.url ?? `http://${urlHost(config.host)}:${port}/`;
	return mcpJson(
		url,
		TOKEN_PLACEHOLDER,
		entryName(config.name, hostname(), port, readBoxTag(machineIdFile(process.env))),
		config.port === 0,
	);
}

function main(argv: string[]): number {
	const [verb, name, ...rest] = argv;
	// The file the name reaches, as a host derives it: the same lock, and the hosts its runtime record lists.
	const { link, file: path } = configName(defaultConfigPath(process.env), process.cwd());
	if (link !== path) process.stderr.write(`token: ${link} is a link; editing the file it reaches, ${path}\n`);
	const arity = verb === "list" ? 0 : verb === "add" || verb === "revoke" ? 1 : verb === "rotate" ? -1 : undefined;
	if (arity === undefined || rest.length > 0 || (arity === 0 && name) || (arity === 1 && !name)) {
		process.stderr.write(
			`${verb === undefined || verb === "help" ? "" : `token: '${argv.join(" ")}' is not a command\n`}${USAGE}\n`,
		);
		return verb === "help" ? 0 : 2;
	}
	// A bad name is refused before anything is read or created.
	const why = name === undefined || (verb !== "add" && name === OWNER) ? null : nameProblem(name);
	if (why !== null) throw new Error(`token name '${name}' ${why}`);
	if (verb === "list") {
		if (!existsSync(path))
			throw new Error(`no config at ${path} yet (the first host start, or npm run token -- add NAME, creates it)`);
		const { config } = readConfig(path);
		const rows = [...(config.token === undefined ? [] : [{ name: OWNER, token: config.token }]), ...config.tokens];
		out(`${rows.length} token(s) in ${path} (each has the host's full reach):`);
		for (const t of rows) out(`  ${t.name} ${tokenPrefix(t.token)}`);
		return 0;
	}
	const warnings: string[] = [];
	// `null`: the file is the whole table, read under the lock the edit holds (no copy read before it).
	const edit = <T>(what: string, change: () => T): T => {
		try {
			// Creates the config as a first start would when there is none yet (generated owner token, $schema).
			warnings.push(...loadConfig(path).warnings);
			return change();
		} catch (err) {
			const still = verb === "add" ? "" : `; ${stillLive(path, what)}`;
			throw new Error(`${err instanceof Error ? err.message : String(err)}${still}`);
		} finally {
			for (const w of new Set(warnings)) process.stderr.write(`token: ${w}\n`);
		}
	};
	if (verb === "add") {
		const secret = edit(name as string, () => addToken(path, null, name as string, { warnings }));
		out(`token '${name}' added to ${path}; ${whenApplied(path)}.`);
		const entry = entryFor(path);
		if (entry) {
			out(
				`This host's mcpServers entry (as /a2a mcp-json ${name} prints it); put the secret in for ${TOKEN_PLACEHOLDER}:`,
			);
			out(entry);
		} else {
			out(
				`No port yet: the first host start pins one, then /a2a mcp-json ${name} prints this host's mcpServers entry.`,
			);
		}
		out("Its secret, shown this once (the laptop's Authorization: Bearer value):");
		out(secret);
		return 0;
	}
	if (verb === "revoke") {
		edit(name as string, () => revokeToken(path, null, name as string, { warnings }));
		out(`token '${name}' revoked in ${path}; ${whenApplied(path)}.`);
		return 0;
	}
	const who = name ?? OWNER;
	const secret = edit(who, () => rotateToken(path, null, who, { warnings }));
	out(`token '${who}' has a new secret in ${path}; ${whenApplied(path)}. The old one is refused from then on.`);
	out("The new secret, shown this once:");
	out(secret);
	return 0;
}

try {
	process.exit(main(process.argv.slice(2)));
} catch (err) {
	process.stderr.write(`token: ${err instanceof Error ? err.message : String(err)}\n`);
	process.exit(1);
}
