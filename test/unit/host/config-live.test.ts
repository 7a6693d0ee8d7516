/**
 * A config edit while the bridge runs does what each field's row says (`edit` in src/config/fields.ts): a
 * live field is applied, a next-start field is said to wait, a "never" field is ignored. One test per row of
 * FIELDS, plus a live row added as a row alone. Checked on the live config read back as `/a2a` reads it
 * (the server's tokens included) and on what the host is told.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fieldsTaking, validateConfig } from "../../../src/config/config.ts";
import { FIELDS, ok } from "../../../src/config/fields.ts";
import { readConfig } from "../../../src/config/file.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import { type CommandTarget, liveConfig } from "../../../src/host/a2a-command.ts";
import { configEditApplier, OWN_HANDLING } from "../../../src/host/config-live.ts";
import { FIELD_CASES, OWNER_T } from "../../helpers/config-cases.ts";

const CI_T = "c".repeat(43);

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "config-live-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function target(start: Record<string, unknown>) {
	const configPath = join(dir, "a2a-bridge.json");
	writeFileSync(configPath, JSON.stringify(start), { mode: 0o600 });
	const config = { ...readConfig(configPath).config, token: OWNER_T };
	const server = new BridgeServer(
		{
			version: "0",
			instructions: "",
			listTools: () => [],
			callTool: async () => ({ content: [], isError: false }),
			log: () => {},
		},
		{ ownerSecret: OWNER_T, bindHost: "127.0.0.1", isLoopbackBind: true, allowedOrigins: [] },
	);
	const said: string[] = [];
	const r = { server, configPath, config, unsaved: new Set<string>() } as unknown as CommandTarget;
	const apply = configEditApplier(r, text => said.push(text));
	const edit = (next: Record<string, unknown>) => {
		writeFileSync(configPath, JSON.stringify(next), { mode: 0o600 });
		apply();
	};
	return { server, said, edit, r, live: () => liveConfig(r) as unknown as Record<string, unknown> };
}

describe("configEditApplier", () => {
	test("a new token applies at once; blob and name changes are said to wait for the next start", () => {
		const t = target({ port: 7000, token: OWNER_T });
		t.edit({ port: 7000, token: OWNER_T, tokens: [{ name: "ci", token: CI_T }], blob: "read", name: "lab-a" });
		expect(t.server.tokenNames().sort()).toEqual(["ci", "owner"]);
		expect(t.said.some(s => s.includes("token 'ci' added"))).toBe(true);
		expect(t.said.filter(s => s.includes("applies at the next start"))).toEqual([
			expect.stringContaining("'blob', 'name' changed in"),
		]);
	});

	test("each change is said once: the same file again says nothing new", () => {
		const t = target({ port: 7000, token: OWNER_T });
		t.edit({ port: 7000, token: OWNER_T, host_llm: "deny" });
		t.edit({ port: 7000, token: OWNER_T, host_llm: "deny" });
		expect(t.said.filter(s => s.includes("'host_llm'"))).toHaveLength(1);
	});
});

const BASE = { port: 7000, token: OWNER_T };
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const parsed = (raw: Record<string, unknown>, field: string): unknown => {
	const v = validateConfig(raw, "/cfg/a2a-bridge.json");
	if (!v.ok) throw new Error(v.why);
	return (v.value as Record<string, unknown>)[field];
};
const without = (o: Record<string, unknown>, field: string) =>
	Object.fromEntries(Object.entries(o).filter(([k]) => k !== field));

const DOES = { live: "applied", "next start": "said to wait, not applied", never: "ignored" } as const;

describe("each row's edit decides what an edit of the file does (one test per row of FIELDS)", () => {
	for (const [field, row] of Object.entries(FIELDS)) {
		test(`${field} (edit: ${row.edit}): a good value written to the file is ${DOES[row.edit]}`, () => {
			const t = target(BASE);
			const before = t.live();
			const good = FIELD_CASES[field]?.good ?? [];
			// A value the live config does not hold yet, so applying it or not shows.
			const value = good.find(v => !same(parsed({ ...BASE, [field]: v }, field), before[field])) ?? good[0];
			expect({ field, cases: good.length }).not.toEqual({ field, cases: 0 });
			const want = parsed({ ...BASE, [field]: value }, field);
			t.edit({ ...BASE, [field]: value });
			const after = t.live();
			// Whatever the row says, no other field moves.
			expect(without(after, field)).toEqual(without(before, field));
			const waits = t.said.filter(s => s.includes("applies at the next start"));
			if (row.edit === "live") {
				expect(want).not.toEqual(before[field]);
				expect({ field, live: after[field] }).toEqual({ field, live: want });
				expect(t.said.filter(s => s.includes("config edit applied"))).toHaveLength(1);
				expect(waits).toEqual([]);
			} else if (row.edit === "next start") {
				expect(want).not.toEqual(before[field]);
				expect({ field, live: after[field] }).toEqual({ field, live: before[field] });
				expect(waits).toEqual([expect.stringContaining(`'${field}' changed in`)]);
				expect(t.said).toHaveLength(1);
			} else {
				expect({ field, live: after[field] }).toEqual({ field, live: before[field] });
				expect(t.said).toEqual([]);
			}
		});
	}

	test("handling of its own is only for live rows (an applier on another row would never run)", () => {
		const live = fieldsTaking("live");
		for (const k of Object.keys(OWN_HANDLING))
			expect({ k, live: live.includes(k as never) }).toEqual({ k, live: true });
	});
});

describe("the recipe: a live field added as a row alone is applied", () => {
	const rows = FIELDS as Record<string, unknown>;
	afterEach(() => {
		delete rows.probe_live;
		delete rows.probe_optional;
	});

	test("its value is copied into the live config and said by name, once; left out, it is back at its default", () => {
		rows.probe_live = { schema: { type: "integer" }, parse: (v: unknown) => ok(v), default: 1, edit: "live" };
		const t = target(BASE);
		expect(t.live().probe_live).toBe(1);
		t.edit({ ...BASE, probe_live: 5 });
		expect((t.r.config as unknown as Record<string, unknown>).probe_live).toBe(5);
		expect(t.said).toEqual(["A2A bridge: config edit applied: 'probe_live' applied"]);
		t.edit({ ...BASE, probe_live: 5 });
		expect(t.said).toHaveLength(1);
		t.edit(BASE);
		expect(t.live().probe_live).toBe(1);
		expect(t.said).toHaveLength(2);
	});

	test("a field without a default left out of the file leaves the live config, said as cleared", () => {
		rows.probe_optional = {
			schema: { type: "string" },
			parse: (v: unknown) => ok(v),
			default: undefined,
			edit: "live",
		};
		const t = target({ ...BASE, probe_optional: "x" });
		expect(t.live().probe_optional).toBe("x");
		t.edit(BASE);
		expect(Object.hasOwn(t.live(), "probe_optional")).toBe(false);
		expect(t.said).toEqual(["A2A bridge: config edit applied: 'probe_optional' cleared"]);
	});

	test("hostile: an edit that fails validation applies no live field, not even the valid ones beside it", () => {
		rows.probe_live = { schema: { type: "integer" }, parse: (v: unknown) => ok(v), default: 1, edit: "live" };
		const t = target(BASE);
		t.edit({ ...BASE, probe_live: 9, tokens: [{ name: "ci", token: CI_T }], port: "nope" });
		expect(t.live().probe_live).toBe(1);
		expect(t.server.tokenNames()).toEqual(["owner"]);
		expect(t.said).toEqual([expect.stringContaining("config edit not applied")]);
		expect(t.said[0]).toContain("field 'port'");
	});
});
