/**
 * A config edit while the bridge runs: tokens apply at once, every other field is said to wait for the next
 * start (derived from the rows, so a field added later is said too). Checked on the server's live tokens
 * and on what the host is told.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readConfig } from "../../../src/config/file.ts";
import { BridgeServer } from "../../../src/core/server.ts";
import type { CommandTarget } from "../../../src/host/a2a-command.ts";
import { configEditApplier } from "../../../src/host/config-live.ts";

const OWNER_T = "o".repeat(43);
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
	return { server, said, edit };
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
