/**
 * One row per config field (src/config/fields.ts): everything else about a field is derived from its row,
 * so a field added as a row alone has its default, its schema entry and its edit (applied or said to wait:
 * test/unit/host/config-live.test.ts).
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
	CONFIG_DEFAULTS,
	configSchema,
	fieldsTaking,
	omittedAtDefault,
	validateConfig,
} from "../../../src/config/config.ts";
import { FIELDS, ok } from "../../../src/config/fields.ts";

const FILE = "/cfg/a2a-bridge.json";
const rows = FIELDS as Record<string, unknown>;

describe("defaults come from the rows", () => {
	test("an empty file validates to each row's default; fields without one stay absent", () => {
		const r = validateConfig({}, FILE);
		if (!r.ok) throw new Error(r.why);
		for (const [name, row] of Object.entries(FIELDS)) {
			const got = (r.value as Record<string, unknown>)[name];
			expect({ name, got }).toEqual({ name, got: row.default });
			if (row.default !== undefined) expect(got).not.toBeUndefined();
		}
		expect(Object.keys(CONFIG_DEFAULTS).sort()).toEqual(
			Object.entries(FIELDS)
				.filter(([, row]) => row.default !== undefined)
				.map(([name]) => name)
				.sort(),
		);
	});

	test("each validation hands out fresh copies: changing one leaves the defaults and the next one alone", () => {
		const a = validateConfig({}, FILE);
		if (!a.ok) throw new Error(a.why);
		a.value.tokens.push({ name: "x", token: "y" });
		a.value.allowed_origins.push("http://evil");
		const b = validateConfig({}, FILE);
		expect(b.ok && [b.value.tokens, b.value.allowed_origins]).toEqual([[], []]);
		expect([CONFIG_DEFAULTS.tokens, CONFIG_DEFAULTS.allowed_origins]).toEqual([[], []]);
		expect(Object.isFrozen(CONFIG_DEFAULTS.tokens)).toBe(true);
	});

	test("a file rebuilt from the live config leaves out exactly the rows marked so, while at their default", () => {
		expect(omittedAtDefault("blob", CONFIG_DEFAULTS.blob)).toBe(true);
		expect(omittedAtDefault("blob", "read")).toBe(false);
		expect(omittedAtDefault("tokens", [])).toBe(true);
		expect(omittedAtDefault("host", CONFIG_DEFAULTS.host)).toBe(false);
		expect(omittedAtDefault("nonsense", undefined)).toBe(false);
	});
});

describe("the recipe: a new field is one row", () => {
	afterEach(() => {
		delete rows.probe_field;
	});

	test("an optional field added as a row gets its default, its schema entry and the next-start notice", () => {
		rows.probe_field = {
			schema: { type: "integer", description: "a probe" },
			parse: (v: unknown) => ok(v),
			default: 7,
			edit: "next start",
		};
		const empty = validateConfig({ token: "t".repeat(40) }, FILE);
		expect(empty.ok && (empty.value as Record<string, unknown>).probe_field).toBe(7);
		const set = validateConfig({ probe_field: 3 }, FILE);
		expect(set.ok && (set.value as Record<string, unknown>).probe_field).toBe(3);
		expect((configSchema().properties as Record<string, unknown>).probe_field).toEqual({
			type: "integer",
			description: "a probe",
		});
		expect(fieldsTaking("next start")).toContain("probe_field" as never);
	});
});

describe("when an edit takes effect", () => {
	test("each field is in exactly one of the three lists, in the rows' order (what each does: config-live.test.ts)", () => {
		const lists: string[][] = (["live", "next start", "never"] as const).map(fieldsTaking);
		expect(lists.flat().sort()).toEqual(Object.keys(FIELDS).sort());
		for (const l of lists) expect(l).toEqual(Object.keys(FIELDS).filter(k => l.includes(k)));
	});
});
