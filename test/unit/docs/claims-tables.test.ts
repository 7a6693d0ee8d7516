/**
 * The environment page, the README's configuration table and the command and option tables, held to the
 * code's lists.
 * One of the claims tests: each docs claim held to the file that decides it, so the next drift fails here.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as config from "../../../src/config/config.ts";
import { FIELDS } from "../../../src/config/fields.ts";
import * as tokens from "../../../src/config/tokens.ts";
import * as args from "../../../src/headless/args.ts";
import * as commands from "../../../src/host/commands.ts";
import { ROOT, read } from "../../helpers/claims.ts";

describe("the environment page = the variables the code reads", () => {
	/** Every `process.env.X`, `Bun.env.X` and `env.X` (a parameter defaulting to process.env) in shipped code. */
	const read_ = (dir: string): string[] =>
		readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
			.filter(f => f.endsWith(".ts"))
			.flatMap(f => [
				...read(`${dir}/${f}`).matchAll(
					/\b(?:process\.env|Bun\.env)\.([A-Za-z_][A-Za-z0-9_]*)|\benv\.([A-Z][A-Z0-9_]*)\b/g,
				),
			])
			.map(m => m[1] ?? m[2] ?? "");
	const names = [...new Set([...read_("src"), ...read_("extensions"), ...read_("scripts")])].sort();
	const page = read("docs/guide/environment.md");
	const testOnly = read("docs/testing.md").slice(read("docs/testing.md").indexOf("## Test-only environment variables"));

	test("each is on the page or in testing.md's test-only table", () => {
		expect(names.length).toBeGreaterThan(5);
		expect(names.filter(n => !page.includes(`\`${n}\``) && !testOnly.includes(`\`${n}\``))).toEqual([]);
	});

	test("each A2A_ variable on the page is read by the code, and the Chinese page lists the same", () => {
		const listed = [...page.matchAll(/^\| `(A2A_[A-Z_]+)`/gm)].map(m => m[1]);
		expect(listed.filter(n => !names.includes(n ?? ""))).toEqual([]);
		const zh = [...read("docs/zh/guide/environment.md").matchAll(/^\| `(A2A_[A-Z_]+)`/gm)].map(m => m[1]);
		expect(zh).toEqual(listed);
	});
});

describe("the README's configuration table (both languages) = the validator's field table", () => {
	for (const file of ["README.md", "README_ZN.md"]) {
		test(`${file}: one row per field of FIELDS, with the defaults and bounds the code uses`, () => {
			const text = read(file);
			const rows = new Map(
				[...text.matchAll(/^\| `([$a-z_]+)` \| (.*) \|$/gm)]
					.filter(m => (m[1] ?? "") in FIELDS)
					.map(m => [m[1] ?? "", m[2] ?? ""] as const),
			);
			expect([...rows.keys()].sort()).toEqual(Object.keys(FIELDS).sort());
			expect(rows.get("host")).toContain(`\`${config.CONFIG_DEFAULTS.host}\``);
			expect(rows.get("blob")).toContain(`"${config.CONFIG_DEFAULTS.blob}"`);
			expect(rows.get("tokens")).toContain(`${tokens.MAX_NAMED_TOKENS}`);
			const pattern = JSON.stringify(config.configSchema()).match(/\{(\d+),\}/)?.[1];
			expect(rows.get("token")).toContain(`${pattern}`);
			expect(rows.get("port")).toContain("65535");
		});
	}
});

describe("command and option tables = the code's lists", () => {
	test("the README's /a2a table (both languages) has exactly the commands the host's usage line names", () => {
		const named = commands.TOKENS_USAGE.replace(/^use /, "").split(", ");
		for (const file of ["README.md", "README_ZN.md"]) {
			const rows = [...read(file).matchAll(/^\| `(\/a2a[^`]*)` \|/gm)].map(m => m[1]);
			expect({ file, rows }).toEqual({ file, rows: named });
		}
	});

	test("usage.md's --approvals table: the three modes and the default approval timeout", () => {
		const usage = read("docs/usage.md");
		const rows = [...usage.matchAll(/^\| `(ask|deny|approve)` /gm)].map(m => m[1]);
		expect(rows).toEqual(["ask", "deny", "approve"]);
		expect(usage).toContain(`Deny after \`--approval-timeout\` s (${args.DEFAULT_APPROVAL_TIMEOUT_MS / 1000})`);
	});
});
