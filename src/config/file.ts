/**
 * The config file on disk: load (creating it, or writing a generated token back, when needed), rotate,
 * add and revoke tokens. Invariants: created at mode 0600 and replaced atomically (temp file + rename); unknown
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
	OPTIONAL_DEFAULTS,
	validateConfig,
} from "./config.ts";
import { MAX_NAMED_TOKENS, nameProblem, OWNER } from "./tokens.ts";

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

/** The file's current object, or one rebuilt from `current` when the file is gone; refuses a broken file. */
function readRaw(path: string, current: BridgeConfig): Record<string, unknown> {
	if (!existsSync(path)) {
		const isDefault = ([k, v]: [string, unknown]) =>
			k in OPTIONAL_DEFAULTS && JSON.stringify(v) === JSON.stringify(OPTIONAL_DEFAULTS[k as keyof BridgeConfig]);
		return Object.fromEntries(Object.entries(current).filter(e => !isDefault(e)));
	}
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
	return parsed as Record<string, unknown>;
}

/** The file's `tokens` entries as they are (unknown entries kept), refusing a `tokens` that is not an array. */
function rawTokens(path: string, raw: Record<string, unknown>): unknown[] {
	if (raw.tokens === undefined) return [];
	if (!Array.isArray(raw.tokens)) throw new Error(`${path}: field 'tokens' must be an array of {name, token} objects`);
	return raw.tokens;
}

const entryName = (e: unknown): unknown =>
	typeof e === "object" && e !== null ? (e as { name?: unknown }).name : null;

/**
 * Replaces a token on disk, keeping every other field, and returns it: the owner's (top-level
 * `token`) or the named one's. A missing file is recreated from `current`; a file that no longer
 * parses is left alone and the rotation refused.
 */
export function rotateToken(path: string, current: BridgeConfig, name: string = OWNER): string {
	const raw = readRaw(path, current);
	const token = generateToken();
	if (name === OWNER) {
		writeFileAtomic0600(path, serialize({ ...raw, token }));
		return token;
	}
	const entries = rawTokens(path, raw);
	const known = current.tokens.some(t => t.name === name) || entries.some(e => entryName(e) === name);
	if (!known) throw new Error(`no token named '${name}'`);
	// Replaced in place; a name live but missing from the file (edited since the start) is appended.
	const onDisk = entries.some(e => entryName(e) === name);
	const tokens = onDisk
		? entries.map(e => (entryName(e) === name ? { name, token } : e))
		: [...entries, { name, token }];
	writeFileAtomic0600(path, serialize({ ...raw, tokens }));
	return token;
}

/** Adds a named token on disk (0600, atomic) and returns its secret; the caller makes it live afterwards. */
export function addToken(path: string, current: BridgeConfig, name: string): string {
	const why = nameProblem(name);
	if (why !== null) throw new Error(`token name '${name}' ${why}`);
	const raw = readRaw(path, current);
	const entries = rawTokens(path, raw);
	if (current.tokens.some(t => t.name === name) || entries.some(e => entryName(e) === name)) {
		throw new Error(`a token named '${name}' exists already (use /a2a rotate ${name} for a new secret)`);
	}
	if (entries.length >= MAX_NAMED_TOKENS) throw new Error(`at most ${MAX_NAMED_TOKENS} named tokens`);
	const token = generateToken();
	writeFileAtomic0600(path, serialize({ ...raw, tokens: [...entries, { name, token }] }));
	return token;
}

/** Removes a named token from disk; refuses a name neither live nor on disk. */
export function revokeToken(path: string, current: BridgeConfig, name: string): void {
	if (name === OWNER) throw new Error(`the owner token cannot be revoked (use /a2a rotate to replace it)`);
	const raw = readRaw(path, current);
	const entries = rawTokens(path, raw);
	const rest = entries.filter(e => entryName(e) !== name);
	if (rest.length === entries.length && !current.tokens.some(t => t.name === name)) {
		throw new Error(`no token named '${name}'`);
	}
	writeFileAtomic0600(path, serialize({ ...raw, tokens: rest }));
}
