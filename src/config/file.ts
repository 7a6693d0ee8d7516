/**
 * The config file on disk: load (creating it, or writing a generated token back, when needed), rotate
 * the token. Invariants: created at mode 0600 and replaced atomically (temp file + rename); unknown
 * fields survive every rewrite; a file that fails validation is never rewritten.
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import {
	type BridgeConfig,
	CONFIG_DEFAULTS,
	generateToken,
	isLoopbackHost,
	type LoadedConfig,
	validateConfig,
} from "./config.ts";

/** Writes `data` to `path` at mode 0600 via a temp file and rename, so readers never see half a file. */
export function writeFileAtomic0600(path: string, data: string): void {
	mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
	const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
	const fd = openSync(tmp, "wx", 0o600);
	try {
		writeSync(fd, data);
	} finally {
		closeSync(fd);
	}
	try {
		renameSync(tmp, path);
	} catch (err) {
		unlinkSync(tmp);
		throw err;
	}
}

const serialize = (obj: Record<string, unknown>): string => `${JSON.stringify(obj, null, "\t")}\n`;

/**
 * Reads (or creates) the config file. Throws an Error whose message names the file and the
 * field on any problem: this is the edge where the start is refused.
 */
export function loadConfig(path: string): LoadedConfig {
	const warnings: string[] = [];
	let raw: Record<string, unknown>;
	if (!existsSync(path)) {
		raw = {
			port: CONFIG_DEFAULTS.port,
			token: generateToken(),
			host: CONFIG_DEFAULTS.host,
			host_llm: CONFIG_DEFAULTS.host_llm,
		};
		writeFileAtomic0600(path, serialize(raw));
		warnings.push(`created ${path} with a new token`);
	} else {
		let text: string;
		try {
			text = readFileSync(path, "utf8");
		} catch (err) {
			throw new Error(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
		}
		try {
			raw = JSON.parse(text);
		} catch {
			throw new Error(`${path}: not valid JSON`);
		}
	}
	const checked = validateConfig(raw, path);
	if (!checked.ok) throw new Error(checked.message);
	let token = checked.value.token;
	if (token === undefined) {
		token = generateToken();
		writeFileAtomic0600(path, serialize({ ...raw, token }));
		warnings.push(`generated a token and wrote it to ${path}`);
	}
	if (!isLoopbackHost(checked.value.host)) {
		warnings.push(
			`listening on non-loopback address ${checked.value.host}: anyone who can reach it and holds the token controls this host`,
		);
	}
	return { path, config: { ...checked.value, token }, warnings };
}

/**
 * Replaces the token on disk, keeping every other field, and returns it. A missing file is
 * recreated from `current`; a file that no longer parses is left alone and the rotation refused.
 */
export function rotateToken(path: string, current: BridgeConfig): string {
	let raw: Record<string, unknown>;
	if (!existsSync(path)) {
		const { allowed_origins, ...rest } = current;
		raw = allowed_origins.length > 0 ? { ...rest, allowed_origins } : { ...rest };
	} else {
		let parsed: unknown;
		try {
			parsed = JSON.parse(readFileSync(path, "utf8"));
		} catch (err) {
			const cause = (err as NodeJS.ErrnoException).code ?? "not valid JSON";
			throw new Error(`${path}: cannot read (${cause})`);
		}
		if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
			throw new Error(`${path}: must hold a JSON object`);
		}
		raw = parsed as Record<string, unknown>;
	}
	const token = generateToken();
	writeFileAtomic0600(path, serialize({ ...raw, token }));
	return token;
}
