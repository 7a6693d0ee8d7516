/**
 * The bridge's own code without the host: `BridgeServer` with a real audit log and the real `/blob` route, over
 * a fake host adapter (`listTools` a constant catalog, `callTool` one fixed answer). bench/probe-ext.ts serves
 * it inside the host; `bun bench/core.ts` serves it as its own process (CORE_TOKEN, CORE_CATALOG, CORE_HOME;
 * prints its port), so a row can tell the bridge's code from the process it runs in.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createAuditLog } from "../src/audit/log.ts";
import { createBlobRoute } from "../src/blob/route.ts";
import { bindBun } from "../src/core/listen.ts";
import { BridgeServer } from "../src/core/server.ts";
import type { McpTool, ToolCallOutcome } from "../src/core/types.ts";

/** The core's audit log, in its `home`. */
export const CORE_AUDIT_FILE = "bench-core.log";

export interface CoreSpec {
	token: string;
	/** Named tokens beside the owner's: bench/mcp.ts spends each round's calls under one of its own. */
	tokens?: Array<{ name: string; token: string }>;
	/** Where the audit log goes; `/blob` paths resolve against it too. */
	home: string;
	tools: McpTool[];
	outcome: ToolCallOutcome;
}

/** Serves the core on a random loopback port; resolves the port. */
export function serveCore(spec: CoreSpec): number {
	const secrets = [spec.token, ...(spec.tokens ?? []).map(t => t.token)];
	const audit = createAuditLog({ path: join(spec.home, CORE_AUDIT_FILE), log: () => {}, secrets: () => secrets });
	const blob = createBlobRoute({
		home: () => spec.home,
		cwd: () => spec.home,
		audit: record => audit.write(record),
		refused: record => audit.refused(record),
		admit: record => audit.admit(record, 1),
		log: line => process.stderr.write(`${line}\n`),
		config: () => ({ blob: "write" }),
	});
	const server = new BridgeServer(
		{
			version: "bench",
			instructions: "",
			listTools: () => spec.tools,
			callTool: async req => {
				await req.begin?.();
				return spec.outcome;
			},
			audit: audit.calls,
			log: line => process.stderr.write(`${line}\n`),
		},
		{
			ownerSecret: spec.token,
			...(spec.tokens ? { tokens: spec.tokens } : {}),
			bindHost: "127.0.0.1",
			isLoopbackBind: true,
			allowedOrigins: [],
			routes: { "/blob": blob },
		},
	);
	return bindBun(server.handle, "127.0.0.1", 0).binding.port;
}

if (import.meta.main) {
	const catalog = process.env.CORE_CATALOG;
	const port = serveCore({
		token: process.env.CORE_TOKEN ?? "",
		home: process.env.CORE_HOME ?? process.cwd(),
		tools: catalog ? (JSON.parse(readFileSync(catalog, "utf8")) as McpTool[]) : [],
		outcome: { content: [{ type: "text", text: "ok" }], isError: false },
	});
	process.stdout.write(`${port}\n`);
}
