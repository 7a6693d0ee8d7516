/**
 * Bridge configuration: `~/.omp/agent/a2a-bridge.json` or `$A2A_BRIDGE_CONFIG`, read by its field rows
 * (fields.ts): the config type, the defaults, the shipped schema and which edits apply live or wait for
 * the next start are derived from them here. Invariants: fail closed (a present but malformed field
 * refuses the start, naming file and field); only an absent or non-string token is generated and written
 * back (by file.ts, which owns the disk). Pure: the caller hands in the environment.
 */
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { type EditTakes, FIELDS, type FieldRow, ok } from "./fields.ts";
import { nearestOf } from "./nearest.ts";

export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string };

type Rows = typeof FIELDS;
type ValueOf<R> = R extends FieldRow<infer T, infer _D> ? Exclude<T, undefined> : never;
type HasDefault<K extends keyof Rows> = Rows[K]["default"] extends undefined ? never : K;
/** Fields with a default: always present once validated. */
type Defaulted = { [K in keyof Rows as HasDefault<K>]: ValueOf<Rows[K]> };
/** Fields whose absence is their meaning. */
type Optional = { [K in Exclude<keyof Rows, keyof Defaulted | "$schema">]?: ValueOf<Rows[K]> };

/** The validated config, typed by the rows; the owner token is always there once file.ts loaded it. */
export type BridgeConfig = Defaulted & Omit<Optional, "token"> & { token: string };

export interface LoadedConfig {
	path: string;
	config: BridgeConfig;
	/** Non-fatal remarks for the operator (non-loopback bind, generated token). */
	warnings: string[];
	/** Whether the file names a port: absent means the first start writes the one it binds (contract §18). */
	portFromFile: boolean;
}

/** The field names, read from the rows at each use (so a row is all a new field needs). */
const keys = (): Array<keyof Rows> => Object.keys(FIELDS) as Array<keyof Rows>;

/** Each field's value when the file leaves it out, frozen (validateConfig hands out copies). */
export const CONFIG_DEFAULTS: Readonly<Defaulted> = Object.freeze(
	Object.fromEntries(
		keys().flatMap(k => (FIELDS[k].default === undefined ? [] : [[k, Object.freeze(FIELDS[k].default)]])),
	) as unknown as Defaulted,
);

/** Whether a file rebuilt from the live config leaves `key` out: its row says so and it holds its default. */
export function omittedAtDefault(key: string, value: unknown): boolean {
	const r = Object.hasOwn(FIELDS, key) ? FIELDS[key as keyof Rows] : undefined;
	return r?.omitAtDefault === true && JSON.stringify(value) === JSON.stringify(r.default);
}

/** The fields whose row says an edit takes effect `when`: src/host/config-live.ts acts on each by it. */
export const fieldsTaking = (when: EditTakes): Array<keyof BridgeConfig> =>
	keys().filter(k => FIELDS[k].edit === when) as Array<keyof BridgeConfig>;

export function defaultConfigPath(env: Record<string, string | undefined>): string {
	const fromEnv = env.A2A_BRIDGE_CONFIG;
	return fromEnv && fromEnv.length > 0 ? fromEnv : join(homedir(), ".omp", "agent", "a2a-bridge.json");
}

/** 32 random bytes as unpadded base64url: always 43 characters. */
export function generateToken(): string {
	return randomBytes(32).toString("base64url");
}

/** The known key a typo most likely meant, or null. @internal */
export const nearestField = (key: string): string | null => nearestOf(key, keys());

/** The JSON Schema that `schema/a2a-bridge.schema.json` holds (written by `bun scripts/schema.ts`). */
export function configSchema(): Record<string, unknown> {
	return {
		$schema: "http://json-schema.org/draft-07/schema#",
		title: "pi-a2a-ext bridge config (~/.omp/agent/a2a-bridge.json)",
		type: "object",
		additionalProperties: false,
		properties: Object.fromEntries(keys().map(k => [k, FIELDS[k].schema])),
	};
}

type Validated = Omit<BridgeConfig, "token"> & { token: string | undefined };

/**
 * Validates the raw JSON object: first that every key is known, then each present field by its row;
 * an absent one takes its row's default. `token` may be absent (the caller generates one).
 */
export function validateConfig(raw: unknown, file: string): Parsed<Validated> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return { ok: false, why: `${file}: must hold a JSON object` };
	}
	const obj = raw as Record<string, unknown>;
	const unknown = Object.keys(obj).find(k => !Object.hasOwn(FIELDS, k));
	if (unknown !== undefined) {
		const near = nearestField(unknown);
		const hint = near ? `did you mean '${near}'?` : `known fields: ${keys().join(", ")}`;
		return { ok: false, why: `${file}: unknown field '${unknown}' (${hint})` };
	}
	const value: Record<string, unknown> = { token: undefined };
	for (const name of keys()) {
		const field: FieldRow<unknown, unknown> = FIELDS[name];
		// Present means present: a null field is malformed, not absent (only the token may be replaced).
		const r = Object.hasOwn(obj, name) ? field.parse(obj[name], obj) : ok(structuredClone(field.default));
		if (!r.ok) return { ok: false, why: `${file}: field '${r.field ?? name}' ${r.why}` };
		if (r.value !== undefined) value[name] = r.value;
	}
	return { ok: true, value: value as Validated };
}
