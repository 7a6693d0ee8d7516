/**
 * Bridge configuration: `~/.omp/agent/a2a-bridge.json` or `$A2A_BRIDGE_CONFIG`.
 * Invariants: fail closed (a present but malformed field refuses the start, naming file and field);
 * only an absent or non-string token is generated and written back (by file.ts, which owns
 * the disk). Pure apart from reading the environment for the default path.
 */
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import {
	BLOB_MODES,
	type BlobMode,
	type FieldResult,
	MAX_NAMED_TOKENS,
	type NamedToken,
	OWNER,
	TOKEN_NAME,
	tokenProblem,
	validateBlobMode,
	validateTokens,
} from "./tokens.ts";

export type HostLlm = "allow" | "deny";

export interface BridgeConfig {
	port: number;
	token: string;
	host: string;
	host_llm: HostLlm;
	allowed_origins: string[];
	/** Named tokens beside the owner's (contract §14): identities, each with the host's full reach. */
	tokens: NamedToken[];
	/** What `/blob` serves: both ways, downloads only, or nothing. */
	blob: BlobMode;
	/** The name printed `mcpServers` entries carry (contract §20); absent: `omp-<host name>-<port>`. */
	name?: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export interface LoadedConfig {
	path: string;
	config: BridgeConfig;
	/** Non-fatal remarks for the operator (non-loopback bind, generated token). */
	warnings: string[];
	/** Whether the file names a port: absent means the first start writes the one it binds (contract §18). */
	portFromFile: boolean;
}

export const CONFIG_DEFAULTS = { port: 0, host: "127.0.0.1", host_llm: "allow" as HostLlm };
/** Fields a file rebuilt from the live config leaves out while they hold their default (absent means it). */
export const OPTIONAL_DEFAULTS: Partial<Record<keyof BridgeConfig, unknown>> = {
	allowed_origins: [],
	tokens: [],
	blob: "write",
};

export function defaultConfigPath(env: Record<string, string | undefined> = process.env): string {
	const fromEnv = env.A2A_BRIDGE_CONFIG;
	return fromEnv && fromEnv.length > 0 ? fromEnv : join(homedir(), ".omp", "agent", "a2a-bridge.json");
}

/** 32 random bytes as unpadded base64url: always 43 characters. */
export function generateToken(): string {
	return randomBytes(32).toString("base64url");
}

/** localhost, 127.0.0.0/8, ::1 and the IPv4-mapped loopback ::ffff:127.0.0.0/104 in any IPv6 spelling. */
export function isLoopbackHost(host: string): boolean {
	const h = host.toLowerCase().replace(/^\[|\]$/g, "");
	if (h === "localhost" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
	if (!h.includes(":")) return false;
	let canonical: string;
	try {
		// The WHATWG URL parser writes an IPv6 address in its one compressed form (::ffff:7f00:1).
		canonical = new URL(`http://[${h}]/`).hostname;
	} catch {
		return false;
	}
	return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

/** Canonical `scheme://host[:port]` of an origin string, or null when it is not one. @internal */
export function normalizeOrigin(value: string): string | null {
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return null;
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") return null;
	if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== ""))
		return null;
	if (value.endsWith("/")) return null;
	return url.origin;
}

/** What a field's parser answers: its value, or the rule it broke and where (`tokens[2].name`). */
type FieldCheck = { ok: true; value: unknown } | { ok: false; field?: string; rule: string };

/**
 * One row per top-level config field: the JSON Schema fragment editors check while typing (the shipped
 * `schema/a2a-bridge.schema.json` is generated from these rows) and the parser the bridge runs. A test
 * feeds both the same good and bad values per field, so the two cannot drift apart.
 */
interface FieldRow {
	schema: Record<string, unknown>;
	/** Runs on a present value; `raw` is the whole object, for the one cross-field rule (named tokens vs owner). */
	parse(value: unknown, raw: Record<string, unknown>): FieldCheck;
}

const ok = (value: unknown): FieldCheck => ({ ok: true, value });
const rule = (text: string, field?: string): FieldCheck => ({ ok: false, rule: text, ...(field ? { field } : {}) });
const PORT_RULE = "must be an integer in [0, 65535]";
const PORT_DIGITS = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
/** The origin shape both the schema and the parser demand; `normalizeOrigin` then checks the host itself. */
const ORIGIN = `^[Hh][Tt][Tt][Pp][Ss]?://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(:${PORT_DIGITS})?$`;
/** An mcpServers key every client takes as it is (and omp turns into a tool prefix). */
const ENTRY_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const ENTRY_NAME_RULE = "must be 1-48 of A-Z a-z 0-9 _ - starting with a letter or digit";
const checkResult = (r: FieldResult<unknown>): FieldCheck =>
	r.ok ? ok(r.value) : { ok: false, field: r.field, rule: r.rule };

/** @internal */
export const FIELDS: Record<string, FieldRow> = {
	$schema: {
		schema: { type: "string", description: "Where editors find this schema; the bridge ignores it." },
		parse: v => (typeof v === "string" ? ok(v) : rule("must be a string (the schema's path or URL)")),
	},
	port: {
		schema: {
			type: "integer",
			minimum: 0,
			maximum: 65535,
			description:
				"Listen port. Absent: the first start picks one and writes it here. 0: a new random port every start.",
		},
		parse: v => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535 ? ok(v) : rule(PORT_RULE)),
	},
	token: {
		// A non-string token counts as absent and is replaced by a generated one (contract §1), so it is no error.
		schema: {
			anyOf: [{ type: "string", pattern: "^[!-~]{32,}$" }, { not: { type: "string" } }],
			description: "The owner's Bearer token: at least 32 printable ASCII characters, no whitespace.",
		},
		parse: v => {
			if (typeof v !== "string") return ok(undefined);
			const why = tokenProblem(v);
			return why === null ? ok(v) : rule(why);
		},
	},
	host: {
		schema: { type: "string", pattern: "\\S", description: "Listen address; a non-loopback one shows a warning." },
		parse: v => (typeof v === "string" && v.trim().length > 0 ? ok(v) : rule("must be a non-empty string")),
	},
	host_llm: {
		schema: { enum: ["allow", "deny"], description: "Host inference takeover state at start." },
		parse: v => (v === "allow" || v === "deny" ? ok(v) : rule('must be "allow" or "deny"')),
	},
	allowed_origins: {
		schema: {
			type: "array",
			items: { type: "string", pattern: ORIGIN },
			description: "Browser origins allowed besides same-origin, e.g. http://localhost:5173.",
		},
		parse: v => {
			if (!Array.isArray(v)) return rule("must be an array of origin strings");
			const out: string[] = [];
			for (const [i, o] of v.entries()) {
				const norm = typeof o === "string" && new RegExp(ORIGIN).test(o) ? normalizeOrigin(o) : null;
				if (norm === null) return rule("must be an origin like http://host:port", `allowed_origins[${i}]`);
				out.push(norm);
			}
			return ok(out);
		},
	},
	tokens: {
		schema: {
			type: "array",
			maxItems: MAX_NAMED_TOKENS,
			items: {
				type: "object",
				required: ["name", "token"],
				additionalProperties: false,
				properties: {
					name: { type: "string", pattern: TOKEN_NAME.source, not: { const: OWNER } },
					token: { type: "string", pattern: "^[!-~]{32,}$" },
				},
			},
			description: "Named tokens beside the owner's: distinct names and secrets, each with the host's full reach.",
		},
		parse: (v, raw) => checkResult(validateTokens(v, typeof raw.token === "string" ? raw.token : undefined)),
	},
	blob: {
		schema: { enum: BLOB_MODES, description: "What /blob serves: write (both ways), read (downloads) or off." },
		parse: v => checkResult(validateBlobMode(v)),
	},
	name: {
		schema: {
			type: "string",
			pattern: ENTRY_NAME.source,
			description:
				"The name of this host's printed mcpServers entries (1-48 of A-Z a-z 0-9 _ -). Absent: omp-<host name>-<port>.",
		},
		parse: v => (typeof v === "string" && ENTRY_NAME.test(v) ? ok(v) : rule(ENTRY_NAME_RULE)),
	},
};

const KNOWN = Object.keys(FIELDS);

/** Edit distance, for the "did you mean" of an unknown key; keys are short, so the plain table is fine. */
function distance(a: string, b: string): number {
	let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const row = [i];
		for (let j = 1; j <= b.length; j++) {
			row[j] = Math.min(
				(prev[j] ?? 0) + 1,
				(row[j - 1] ?? 0) + 1,
				(prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
			);
		}
		prev = row;
	}
	return prev[b.length] ?? 0;
}

/** The known key a typo most likely meant (case and `-`/`_` ignored, then an edit per 3 characters), or null. @internal */
export function nearestField(key: string): string | null {
	const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
	const folded = fold(key);
	const scored = KNOWN.map(k => ({ k, d: distance(folded, fold(k)) })).sort((x, y) => x.d - y.d);
	const best = scored[0];
	return best && best.d <= Math.min(3, Math.max(1, Math.floor(folded.length / 3))) ? best.k : null;
}

/** The JSON Schema that `schema/a2a-bridge.schema.json` holds (written by `bun scripts/schema.ts`). */
export function configSchema(): Record<string, unknown> {
	const properties = Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, f.schema]));
	return {
		$schema: "http://json-schema.org/draft-07/schema#",
		title: "pi-a2a-ext bridge config (~/.omp/agent/a2a-bridge.json)",
		type: "object",
		additionalProperties: false,
		properties,
	};
}

type Validated = Omit<BridgeConfig, "token"> & { token: string | undefined };

/**
 * Validates the raw JSON object: first that every key is known, then each field by its row. `token`
 * may be absent (the caller generates one); everything else that is present must be well-formed.
 */
export function validateConfig(raw: unknown, file: string): Parsed<Validated> {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return { ok: false, message: `${file}: must hold a JSON object` };
	}
	const obj = raw as Record<string, unknown>;
	const unknown = Object.keys(obj).find(k => !Object.hasOwn(FIELDS, k));
	if (unknown !== undefined) {
		const near = nearestField(unknown);
		const hint = near ? `did you mean '${near}'?` : `known fields: ${KNOWN.join(", ")}`;
		return { ok: false, message: `${file}: unknown field '${unknown}' (${hint})` };
	}
	const value: Record<string, unknown> = { ...CONFIG_DEFAULTS, allowed_origins: [], tokens: [], blob: "write" };
	value.token = undefined;
	for (const [name, row] of Object.entries(FIELDS)) {
		// Present means present: a null field is malformed, not absent (only the token may be replaced).
		if (!(name in obj)) continue;
		const r = row.parse(obj[name], obj);
		if (!r.ok) return { ok: false, message: `${file}: field '${r.field ?? name}' ${r.rule}` };
		if (name !== "$schema") value[name] = r.value;
	}
	return { ok: true, value: value as unknown as Validated };
}
