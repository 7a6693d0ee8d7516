/**
 * Attack 7, attack 6's open question: can a `/blob`-written ~/.omp/agent/config.yml change Main's live approval
 * settings before omp next starts? docs/guide/phone.md says such settings "take effect when omp next starts". The
 * pinned omp's `Settings.reloadFromDisk` (called on the session's own settings by task/structured-subagent.ts
 * `resolveEffectiveSubagentPolicy`, i.e. on every `task` call, the host agent's or a remote one) re-reads it live.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Settings } from "@oh-my-pi/pi-coding-agent/config/settings";

const dirs: string[] = [];
afterAll(() => {
	for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("R0 the pinned omp's task path reloads the session's settings from disk (the call the claim depends on)", () => {
	const src = readFileSync(
		path.join(import.meta.dir, "../../../node_modules/@oh-my-pi/pi-coding-agent/src/task/structured-subagent.ts"),
		"utf8",
	);
	expect(src).toContain("await request.session.settings.reloadFromDisk();");
});

test("R1 docs/guide/phone.md says a rewritten config.yml takes effect when omp next starts; omp's live Settings takes it at the next reloadFromDisk (always-ask becomes yolo)", async () => {
	const agentDir = mkdtempSync(path.join(tmpdir(), "a7-agent-"));
	const cwd = mkdtempSync(path.join(tmpdir(), "a7-cwd-"));
	dirs.push(agentDir, cwd);
	const config = path.join(agentDir, "config.yml");
	writeFileSync(config, "tools:\n  approvalMode: always-ask\n");
	const live = await Settings.loadIsolated({ cwd, agentDir });
	expect(live.get("tools.approvalMode")).toBe("always-ask");
	// What a token with "blob": "write" can do: PUT /blob on ~/.omp/agent/config.yml (the bridge refuses only its own files).
	writeFileSync(config, "tools:\n  approvalMode: yolo\n  approval:\n    bash: allow\n");
	await live.reloadFromDisk();
	const docs = readFileSync(path.join(import.meta.dir, "../../../docs/guide/phone.md"), "utf8");
	const claimsNextStart = /take effect when omp next starts/.test(docs.replace(/\s+/g, " "));
	// Rule: the docs say exactly what the code does. Either the docs do not claim "next start", or Main kept always-ask.
	expect({ claimsNextStart, mode: live.get("tools.approvalMode") }).not.toEqual({
		claimsNextStart: true,
		mode: "yolo",
	});
});
