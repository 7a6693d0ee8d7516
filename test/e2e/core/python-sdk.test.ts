/**
 * Interop with a client nobody here wrote: the official MCP Python SDK (mcp==2.3.0) drives the real
 * host in each of its modes. The SDK lives in .venv-mcp/ (scripts/mcp-venv.sh, run by .ci/run); a
 * missing venv fails this file with the command that creates it, never a skip.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, ROOT, useSharedHost } from "../../helpers/host.ts";
import { MODERN } from "../../helpers/modern.ts";
import { runCommand } from "../../helpers/run.ts";
import { waitFor } from "../../helpers/wait.ts";

const PYTHON = join(ROOT, ".venv-mcp", "bin", "python");
const CLIENT = join(ROOT, "test", "fixtures", "mcp_client.py");
const SERVED = ["2025-03-26", "2025-06-18", "2025-11-25", MODERN];

/** Runs the SDK client once (bounded) and returns its JSON answer. */
async function sdk(host: Host, mode: string, ...action: string[]): Promise<Record<string, unknown> & unknown[]> {
	if (!existsSync(PYTHON)) {
		throw new Error(`the MCP Python SDK is missing: run scripts/mcp-venv.sh (creates .venv-mcp/ with mcp==2.3.0)`);
	}
	const { code, out, err } = await runCommand([PYTHON, CLIENT, host.url, host.token, mode, ...action], {
		env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
		timeoutMs: 60_000,
	});
	if (code !== 0) throw new Error(`mcp_client.py ${mode} ${action.join(" ")} exited ${code}: ${err}`);
	return JSON.parse(out);
}

const text = (r: Record<string, unknown>): string => JSON.stringify(r.content);

describe("official Python SDK 2.3.0 client", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("mode 2026-07-28: the server speaks the era (discover names every served version)", async () => {
		const v = await sdk(host, MODERN, "version");
		expect(v.era).toBe("modern");
		expect(v.protocolVersion).toBe(MODERN);
		expect(v.supportedVersions).toEqual(SERVED);
		expect((v.serverInfo as { name: string }).name).toBe("omp-a2a-bridge");
	}, 90_000);

	test("mode 2026-07-28: tools/list", async () => {
		const names = await sdk(host, MODERN, "list");
		expect(names).toContain("bash");
		expect(names).toContain("read");
	}, 90_000);

	test("mode 2026-07-28: tools/call, audited with sid null and the SDK's client name", async () => {
		const marker = `py-modern-${crypto.randomUUID()}`;
		const r = await sdk(host, MODERN, "call", "bash", JSON.stringify({ command: `echo ${marker}` }));
		expect(r.isError).toBe(false);
		expect(text(r)).toContain(marker);
		const records = await waitFor(
			"audit records",
			() => {
				const found = auditRecords(host, marker);
				return found.length === 2 ? found : undefined;
			},
			{ timeoutMs: 5000 },
		);
		for (const rec of records) {
			expect(rec.sid).toBeNull();
			expect(typeof rec.client).toBe("string");
		}
	}, 90_000);

	test("mode 2026-07-28: progress notifications arrive before the result", async () => {
		const command = "for i in 1 2 3 4; do echo tick$i; sleep 0.4; done";
		const r = await sdk(host, MODERN, "progress", "bash", JSON.stringify({ command }));
		const progress = r.progress as Array<{ progress: number; message: string }>;
		expect(progress.length).toBeGreaterThanOrEqual(1);
		for (let i = 1; i < progress.length; i++) {
			expect(progress[i]?.progress).toBeGreaterThan(progress[i - 1]?.progress ?? 0);
		}
		expect(text(r.result as Record<string, unknown>)).toContain("tick4");
	}, 90_000);

	test("mode auto: the client picks the modern era", async () => {
		const v = await sdk(host, "auto", "version");
		expect(v.era).toBe("modern");
		expect(v.protocolVersion).toBe(MODERN);
	}, 90_000);

	test("mode auto: list and call work in the era it picked", async () => {
		expect(await sdk(host, "auto", "list")).toContain("bash");
		const r = await sdk(host, "auto", "call", "bash", JSON.stringify({ command: "echo auto-ok" }));
		expect(text(r)).toContain("auto-ok");
	}, 90_000);

	test("mode legacy: initialize handshake, list and call as in 2025 (audited with a session id)", async () => {
		const v = await sdk(host, "legacy", "version");
		expect(v.era).toBe("legacy");
		expect(["2025-06-18", "2025-11-25"]).toContain(v.protocolVersion as string);
		expect(await sdk(host, "legacy", "list")).toContain("read");
		const marker = `py-legacy-${crypto.randomUUID()}`;
		const r = await sdk(host, "legacy", "call", "bash", JSON.stringify({ command: `echo ${marker}` }));
		expect(text(r)).toContain(marker);
		const start = await waitFor("start record", () => auditRecords(host, marker).find(x => x.phase === "start"), {
			timeoutMs: 5000,
		});
		expect(typeof start.sid).toBe("string");
	}, 90_000);
});
