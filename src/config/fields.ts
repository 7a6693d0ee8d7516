/**
 * The config file's fields, one row each: its JSON Schema, its parser, its default and when an edit to
 * a running bridge's file takes effect. Everything else about a field (the config type, the defaults,
 * the shipped schema, what an edit does: applied or said to wait) is derived from its row, so a new field
 * is one row here plus the code that reads it. A test feeds the schema and the parser the same good and
 * bad values per field, so the two cannot drift apart; another edits a running bridge's file once per row.
 */
import { normalizeOrigin } from "./hosts.ts";
import {
	BLOB_MODES,
	type BlobMode,
	type FieldCheck,
	MAX_NAMED_TOKENS,
	OWNER,
	TOKEN_NAME,
	tokenProblem,
	validateTokens,
} from "./tokens.ts";

/**
 * When an edit to the file of a running bridge takes effect (src/host/config-live.ts acts on it): "live" is
 * applied at once (copied into the live config unless the field has handling of its own), "next start" is
 * said to wait, "never" is ignored.
 */
export type EditTakes = "live" | "next start" | "never";

/** One config field; `bun scripts/schema.ts` writes the shipped schema from the rows. */
export interface FieldRow<T, D extends T | undefined> {
	/** The JSON Schema fragment editors check while typing. */
	schema: Record<string, unknown>;
	/** Runs on a present value; `raw` is the whole object, for the one cross-field rule (named tokens vs owner). */
	parse(value: unknown, raw: Record<string, unknown>): FieldCheck<T>;
	/** What an absent field means; `undefined` only where absence is the meaning itself (a generated token, a built name). */
	default: D;
	edit: EditTakes;
	/** A file the bridge rebuilds from the live config leaves the field out while it holds its default. */
	omitAtDefault?: true;
}

/** Types a row by its parser and default, so the config type below follows the rows. */
const row = <T, D extends T | undefined>(r: FieldRow<T, D>): FieldRow<T, D> => r;
export const ok = <T>(value: T): FieldCheck<T> => ({ ok: true, value });
const rule = (text: string, field?: string): FieldCheck<never> => ({
	ok: false,
	why: text,
	...(field ? { field } : {}),
});
const PORT_RULE = "must be an integer in [0, 65535]";
const PORT_DIGITS = "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})";
/** The origin shape both the schema and the parser demand; `normalizeOrigin` then checks the host itself. */
const ORIGIN = `^[Hh][Tt][Tt][Pp][Ss]?://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)(:${PORT_DIGITS})?$`;
/** An mcpServers key every client takes as it is (and omp turns into a tool prefix). */
const ENTRY_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const ENTRY_NAME_RULE = "must be 1-48 of A-Z a-z 0-9 _ - starting with a letter or digit";

/** The fields, in the order the schema lists them. */
export const FIELDS = {
	$schema: row({
		schema: { type: "string", description: "Where editors find this schema; the bridge ignores it." },
		parse: v => (typeof v === "string" ? ok(undefined) : rule("must be a string (the schema's path or URL)")),
		default: undefined,
		edit: "never",
	}),
	port: row({
		schema: {
			type: "integer",
			minimum: 0,
			maximum: 65535,
			description:
				"Listen port. Absent: the first start picks one and writes it here. 0: a new random port every start.",
		},
		parse: v => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535 ? ok(v) : rule(PORT_RULE)),
		// Absent binds a random port too; file.ts then pins the one bound (contract §18).
		default: 0,
		edit: "next start",
	}),
	token: row({
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
		default: undefined,
		edit: "live",
	}),
	host: row({
		schema: { type: "string", pattern: "\\S", description: "Listen address; a non-loopback one shows a warning." },
		parse: v => (typeof v === "string" && v.trim().length > 0 ? ok(v) : rule("must be a non-empty string")),
		default: "127.0.0.1",
		edit: "next start",
	}),
	host_llm: row({
		schema: { enum: ["allow", "deny"], description: "Host inference takeover state at start." },
		parse: v => (v === "allow" || v === "deny" ? ok(v) : rule('must be "allow" or "deny"')),
		default: "allow",
		edit: "next start",
	}),
	allowed_origins: row({
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
		default: [],
		edit: "next start",
		omitAtDefault: true,
	}),
	tokens: row({
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
		parse: (v, raw) => validateTokens(v, typeof raw.token === "string" ? raw.token : undefined),
		default: [],
		edit: "live",
		omitAtDefault: true,
	}),
	blob: row({
		schema: { enum: BLOB_MODES, description: "What /blob serves: write (both ways), read (downloads) or off." },
		parse: v => (BLOB_MODES.includes(v as BlobMode) ? ok(v as BlobMode) : rule('must be "write", "read" or "off"')),
		default: "write",
		edit: "next start",
		omitAtDefault: true,
	}),
	name: row({
		schema: {
			type: "string",
			pattern: ENTRY_NAME.source,
			description:
				"The name of this host's printed mcpServers entries (1-48 of A-Z a-z 0-9 _ -). Absent: omp-<host name>-<port>.",
		},
		parse: v => (typeof v === "string" && ENTRY_NAME.test(v) ? ok(v) : rule(ENTRY_NAME_RULE)),
		default: undefined,
		edit: "next start",
	}),
};
