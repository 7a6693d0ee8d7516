/**
 * The shipped JSON Schema and the bridge's validator give the same verdict, field by field: every value
 * one accepts the other accepts, every refusal is shared, except the few cross-value rules a JSON Schema
 * cannot state (listed in BRIDGE_ONLY, each with the values that hit it). Unknown keys are refused by both.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import fc from "fast-check";
import { configSchema, nearestField, validateConfig } from "../../../src/config/config.ts";
import { FIELDS } from "../../../src/config/fields.ts";
import { SCHEMA_FILE, SCHEMA_URL } from "../../../src/config/file.ts";
import { normalizeOrigin } from "../../../src/config/hosts.ts";
import { A, B, FIELD_CASES as CASES, OWNER_T } from "../../helpers/config-cases.ts";

const FILE = "/cfg/a2a-bridge.json";
const shipped = JSON.parse(readFileSync(SCHEMA_FILE, "utf8"));
const ajv = new Ajv({ strict: true, allErrors: false });
const schemaSays = ajv.compile(shipped);

const bridgeSays = (raw: Record<string, unknown>): boolean => validateConfig(raw, FILE).ok;

/** Refusals only the bridge makes: relations between values, which a JSON Schema cannot express. */
const BRIDGE_ONLY: Record<string, { why: string; values: unknown[] }> = {
	tokens: {
		why: "names and secrets distinct from each other and from the owner's token",
		values: [
			[
				{ name: "ci", token: A },
				{ name: "ci", token: B },
			],
			[
				{ name: "a", token: A },
				{ name: "b", token: A },
			],
			[{ name: "a", token: OWNER_T }],
		],
	},
	allowed_origins: {
		why: "a host the URL parser refuses (malformed IPv6, IPv4 parts out of range, broken punycode)",
		values: [["http://[:]"], ["http://[1.2]"], ["http://999.999.999.999"], ["http://xn--a"]],
	},
};

const withOwner = (field: string, v: unknown): Record<string, unknown> =>
	field === "token" ? { token: v } : { token: OWNER_T, [field]: v };

describe("the shipped schema", () => {
	test("schema/a2a-bridge.schema.json is the field table's schema (regenerate: bun scripts/schema.ts)", () => {
		expect(shipped).toEqual(configSchema());
	});

	test("it names every field of the table, and nothing else is allowed at the top level", () => {
		expect(Object.keys(shipped.properties)).toEqual(Object.keys(FIELDS));
		expect(shipped.additionalProperties).toBe(false);
	});

	test("the config the bridge generates passes it", () => {
		expect(schemaSays({ $schema: SCHEMA_URL, port: 8765, token: A, host: "127.0.0.1", host_llm: "allow" })).toBe(true);
	});
});

describe("schema and validator agree, field by field", () => {
	for (const [field, { good, bad }] of Object.entries(CASES)) {
		test(`${field}: the same values accepted and refused by both`, () => {
			for (const v of good) {
				const raw = withOwner(field, v);
				expect({ v, bridge: bridgeSays(raw), schema: schemaSays(raw) }).toEqual({ v, bridge: true, schema: true });
			}
			for (const v of bad) {
				const raw = withOwner(field, v);
				expect({ v, bridge: bridgeSays(raw), schema: schemaSays(raw) }).toEqual({ v, bridge: false, schema: false });
			}
		});
	}

	test("every field of the table has cases", () => {
		expect(Object.keys(CASES).sort()).toEqual(Object.keys(FIELDS).sort());
	});

	test("the bridge-only refusals are exactly the listed cross-value rules", () => {
		for (const [field, { values }] of Object.entries(BRIDGE_ONLY)) {
			for (const v of values) {
				const raw = withOwner(field, v);
				expect({ v, bridge: bridgeSays(raw), schema: schemaSays(raw) }).toEqual({ v, bridge: false, schema: true });
			}
		}
	});

	test("random values: any disagreement is a listed bridge-only rule, never the schema being stricter", () => {
		const printable = fc.string({ unit: fc.constantFrom(..."aZ09x:/.[]-_@?#!~ \té"), maxLength: 40 });
		const value = fc.oneof(
			fc.jsonValue({ maxDepth: 2 }),
			printable,
			fc.array(printable, { maxLength: 3 }),
			fc.array(fc.record({ name: fc.constantFrom("a", "b", "owner", "B"), token: fc.constantFrom(A, B, OWNER_T) })),
			printable.map(s => `http://${s}`),
			fc.array(
				printable.map(s => `http://${s}`),
				{ maxLength: 2 },
			),
		);
		fc.assert(
			fc.property(fc.constantFrom(...Object.keys(FIELDS)), value, (field, v) => {
				const raw = withOwner(field, v);
				const b = bridgeSays(raw);
				const s = schemaSays(raw);
				if (b === s) return true;
				// Only the bridge may refuse more, and only by a listed rule.
				return !b && s && ((field === "tokens" && crossValue(v)) || (field === "allowed_origins" && badHost(v)));
			}),
			{ numRuns: 3000 },
		);
	});
});

const badHost = (v: unknown): boolean => Array.isArray(v) && v.some(o => normalizeOrigin(String(o)) === null);

function crossValue(v: unknown): boolean {
	if (!Array.isArray(v)) return false;
	const names = v.map(e => e.name);
	const secrets = [OWNER_T, ...v.map(e => e.token)];
	return new Set(names).size < names.length || new Set(secrets).size < secrets.length;
}

describe("unknown keys", () => {
	const cases: Array<[string, string]> = [
		["blobs", "unknown field 'blobs' (did you mean 'blob'?)"],
		["Blob", "unknown field 'Blob' (did you mean 'blob'?)"],
		["PORT", "unknown field 'PORT' (did you mean 'port'?)"],
		["hostllm", "unknown field 'hostllm' (did you mean 'host_llm'?)"],
		["host-llm", "unknown field 'host-llm' (did you mean 'host_llm'?)"],
		["allowed_origin", "unknown field 'allowed_origin' (did you mean 'allowed_origins'?)"],
		["tokns", "unknown field 'tokns' (did you mean 'tokens'?)"],
		["schema", "unknown field 'schema' (did you mean '$schema'?)"],
		["__proto__", "unknown field '__proto__' (known fields: $schema, port, token, host, host_llm"],
		["zzzzzzzz", "unknown field 'zzzzzzzz' (known fields: $schema, port"],
	];
	for (const [key, message] of cases) {
		test(`'${key}' -> refused by both; the bridge names it and the nearest known key`, () => {
			const raw = JSON.parse(`{"token":"${OWNER_T}",${JSON.stringify(key)}:"read"}`);
			const r = validateConfig(raw, FILE);
			expect(r.ok ? "" : r.why).toContain(`${FILE}: ${message}`);
			expect(schemaSays(raw)).toBe(false);
		});
	}

	test("a field is unknown before any value is checked (the typo, not a later field, is named)", () => {
		const r = validateConfig({ port: "bad", blobs: "read" }, FILE);
		expect(r.ok ? "" : r.why).toContain("unknown field 'blobs'");
	});

	test("nearestField: no guess for a key far from every known one", () => {
		expect(nearestField("x")).toBe(null);
		expect(nearestField("listen")).toBe(null);
		expect(nearestField("tokens")).toBe("tokens");
	});
});
