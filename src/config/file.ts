/**
 * The config file on disk: load (creating it, or writing a generated token or the first bound port back),
 * rotate, add and revoke tokens. Invariants: created at mode 0600 and replaced whole and synced (temp file +
 * rename) under a lock, so two writers never lose each other's change and a failed write leaves the file
 * byte-identical; unknown keys are refused by the validator, so no rewrite drops anything; a file that fails
 * validation, or a symlink, is never rewritten. Each edit reads the table it changes under that lock.
 */
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
	type BridgeConfig,
	CONFIG_DEFAULTS,
	generateToken,
	type LoadedConfig,
	omittedAtDefault,
	validateConfig,
} from "./config.ts";
import { writeFileAtomic0600 } from "./disk.ts";
import { isLoopbackHost } from "./hosts.ts";
import { withLock } from "./lock.ts";
import { MAX_NAMED_TOKENS, nameProblem, OWNER } from "./tokens.ts";

/** The JSON Schema shipped in the package, as a file URL editors resolve wherever the package was installed. @internal */
export const SCHEMA_URL = new URL("../../schema/a2a-bridge.schema.json", import.meta.url).href;
export const SCHEMA_FILE = fileURLToPath(SCHEMA_URL);

const serialize = (obj: Record<string, unknown>): string => `${JSON.stringify(obj, null, "\t")}\n`;

/**
 * Validates and writes the whole object (caller holds the lock); refuses a symlink, which the rename would
 * replace: callers hand in the file a link reaches (src/config/paths.ts), so a link here appeared since.
 */
function writeConfig(path: string, raw: Record<string, unknown>): void {
	let link: ReturnType<typeof lstatSync> | undefined;
	try {
		link = lstatSync(path);
	} catch {}
	if (link?.isSymbolicLink()) {
		throw new Error(`${path} became a symlink after its name was resolved; not rewritten (try again)`);
	}
	const checked = validateConfig(raw, path);
	if (!checked.ok) throw new Error(`${checked.why}; file left unchanged`);
	writeFileAtomic0600(path, serialize(raw));
}

/** The file's object and its validated config; throws a sentence naming the file (and field) on any problem. */
export function readConfig(path: string): { raw: Record<string, unknown>; config: ReturnType<typeof check> } {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (err) {
		throw new Error(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch {
		throw new Error(`${path}: not valid JSON`);
	}
	return { raw: raw as Record<string, unknown>, config: check(raw, path) };
}

function check(raw: unknown, path: string) {
	const checked = validateConfig(raw, path);
	if (!checked.ok) throw new Error(checked.why);
	return checked.value;
}

/**
 * Reads (or creates) the config file. Throws an Error whose message names the file and the
 * field on any problem: this is the edge where the start is refused.
 */
export function loadConfig(path: string): LoadedConfig {
	const warnings: string[] = [];
	const { raw, checked } = withLock(
		path,
		() => {
			if (!existsSync(path)) {
				// No port yet: the first start writes the one it bound (pinPort), so the URL stays put.
				const created = {
					$schema: SCHEMA_URL,
					token: generateToken(),
					host: CONFIG_DEFAULTS.host,
					host_llm: CONFIG_DEFAULTS.host_llm,
				};
				writeConfig(path, created);
				warnings.push(`created ${path} with a new token`);
			}
			const read = readConfig(path);
			if (read.config.token !== undefined) return { raw: read.raw, checked: read.config };
			const withToken = { ...read.raw, token: generateToken() };
			writeConfig(path, withToken);
			warnings.push(`generated a token and wrote it to ${path}`);
			return { raw: withToken, checked: check(withToken, path) };
		},
		note(warnings),
	);
	const token = checked.token as string;
	if (!isLoopbackHost(checked.host)) {
		warnings.push(
			`listening on non-loopback address ${checked.host}: anyone who can reach it and holds the token controls this host`,
		);
	}
	return { path, config: { ...checked, token }, warnings, portFromFile: "port" in raw };
}

/**
 * Writes the port a first start bound into a config that has none, right after `$schema`; a port
 * written meanwhile (by a user or another host) wins. Returns whether it wrote.
 */
export function pinPort(path: string, port: number, warnings: string[] = []): boolean {
	return withLock(
		path,
		() => {
			const { raw } = readConfig(path);
			if ("port" in raw) return false;
			const { $schema, ...rest } = raw;
			writeConfig(path, { ...($schema === undefined ? {} : { $schema }), port, ...rest });
			return true;
		},
		note(warnings),
	);
}

/** Collects a lock note (written without the lock, and why) among the caller's warnings. */
const note =
	(warnings: string[]) =>
	(line: string): void => {
		warnings.push(line);
	};

/**
 * Whose table an edit changes: the running host's (`BridgeConfig`: a name live but gone from the file is
 * still known, a missing file is rebuilt from it) or the file's alone (`null`, `npm run token`).
 */
type Base = BridgeConfig | null;

/** What an edit may be told: the secret to write (made live already by the caller) and where lock notes go. */
export interface EditOptions {
	secret?: string;
	warnings?: string[];
}

/** The file's current object, or one rebuilt from `current` when the file is gone; refuses a broken file. */
function readRaw(path: string, current: Base): Record<string, unknown> {
	if (current === null) return readConfig(path).raw;
	if (!existsSync(path)) {
		return Object.fromEntries(Object.entries(current).filter(([k, v]) => !omittedAtDefault(k, v)));
	}
	return readConfig(path).raw;
}

const entryName = (e: unknown): unknown =>
	typeof e === "object" && e !== null ? (e as { name?: unknown }).name : null;

/** The file's `tokens` entries (already validated by readConfig, so an array or absent). */
const rawTokens = (raw: Record<string, unknown>): unknown[] => (Array.isArray(raw.tokens) ? raw.tokens : []);

const liveNamed = (current: Base, name: string): boolean => current?.tokens.some(t => t.name === name) ?? false;

/**
 * Replaces a token on disk, keeping every other field, and returns the secret written: the owner's
 * (top-level `token`) or the named one's. A missing file is recreated from a live `current`; a file that
 * no longer validates is left alone and the rotation refused.
 */
export function rotateToken(path: string, current: Base, name: string = OWNER, opts: EditOptions = {}): string {
	const token = opts.secret ?? generateToken();
	return withLock(
		path,
		() => {
			const raw = readRaw(path, current);
			if (name === OWNER) {
				writeConfig(path, { ...raw, token });
				return token;
			}
			const entries = rawTokens(raw);
			const onDisk = entries.some(e => entryName(e) === name);
			if (!onDisk && !liveNamed(current, name)) throw new Error(`no token named '${name}'`);
			// Replaced in place; a name live but missing from the file (edited since the start) is appended.
			const tokens = onDisk
				? entries.map(e => (entryName(e) === name ? { name, token } : e))
				: [...entries, { name, token }];
			writeConfig(path, { ...raw, tokens });
			return token;
		},
		note(opts.warnings ?? []),
	);
}

/** Adds a named token on disk (0600, whole) and returns its secret; the caller makes it live afterwards. */
export function addToken(path: string, current: Base, name: string, opts: EditOptions = {}): string {
	const why = nameProblem(name);
	if (why !== null) throw new Error(`token name '${name}' ${why}`);
	return withLock(
		path,
		() => {
			const raw = readRaw(path, current);
			const entries = rawTokens(raw);
			if (liveNamed(current, name) || entries.some(e => entryName(e) === name)) {
				throw new Error(`a token named '${name}' exists already (rotate it for a new secret)`);
			}
			if (entries.length >= MAX_NAMED_TOKENS) throw new Error(`at most ${MAX_NAMED_TOKENS} named tokens`);
			const token = opts.secret ?? generateToken();
			writeConfig(path, { ...raw, tokens: [...entries, { name, token }] });
			return token;
		},
		note(opts.warnings ?? []),
	);
}

/** Removes a named token from disk; refuses a name neither live nor on disk. */
export function revokeToken(path: string, current: Base, name: string, opts: EditOptions = {}): void {
	if (name === OWNER) throw new Error(`the owner token cannot be revoked (rotate it for a new secret)`);
	withLock(
		path,
		() => {
			const raw = readRaw(path, current);
			const entries = rawTokens(raw);
			const rest = entries.filter(e => entryName(e) !== name);
			if (rest.length === entries.length && !liveNamed(current, name)) throw new Error(`no token named '${name}'`);
			writeConfig(path, { ...raw, tokens: rest });
		},
		note(opts.warnings ?? []),
	);
}
