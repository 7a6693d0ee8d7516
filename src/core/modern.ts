/**
 * The 2026-07-28 era of MCP on the endpoint (contract §13): every POST stands alone (no
 * `initialize`, no session), carries its own `_meta` envelope and routing headers, and a call is
 * cancelled by closing its response stream. Results carry `resultType` and the server's info.
 */
import type { Identity } from "../config/auth.ts";
import { readMessage } from "./body.ts";
import type { CallTable } from "./calls.ts";
import { type RpcId, rpcError, rpcResult, rpcResultJson } from "./errors.ts";
import { isRecord } from "./jsonrpc.ts";
import { MAX_BODY_BYTES } from "./legacy.ts";
import { checkModernRequest, META_SERVER_INFO, SERVED_VERSIONS } from "./modern-parse.ts";
import type { CallerInfo, McpTool } from "./types.ts";

/** The catalog changes only when the host's tools do, which no notification announces here. */
const TOOLS_TTL_MS = 0;

export interface ModernDeps {
	calls: CallTable;
	serverInfo: { name: string; version: string };
	instructions: string;
	listTools(): readonly McpTool[];
}

export class ModernMcp {
	#listMemo: { list: readonly McpTool[]; json: Blob } | null = null;
	readonly #d: ModernDeps;
	/** `resultType` and `_meta` serverInfo: on every result of the era. */
	readonly #extra: Record<string, unknown>;

	constructor(deps: ModernDeps) {
		this.#d = deps;
		this.#extra = { resultType: "complete", _meta: { [META_SERVER_INFO]: deps.serverInfo } };
	}

	/** `who` is the caller's token; without sessions each call carries its name itself. */
	async handle(req: Request, who: Identity): Promise<Response> {
		const msg = await readMessage(req, MAX_BODY_BYTES);
		if (msg instanceof Response) return msg;
		// The era defines no client notifications (a stream's close is the cancel): acknowledged, dropped.
		if (msg.kind === "notification") return new Response(null, { status: 202 });
		if (msg.kind === "response") return rpcError("invalid_request", msg.id);
		const h = req.headers;
		const check = checkModernRequest(msg.method, msg.params, {
			version: h.get("mcp-protocol-version"),
			method: h.get("mcp-method"),
			name: h.get("mcp-name"),
		});
		if (!check.ok) return rpcError(check.kind, msg.id);
		switch (msg.method) {
			case "server/discover":
				return rpcResult(msg.id, this.#discover());
			case "tools/list":
				return rpcResultJson(msg.id, this.#toolsBlob());
			case "tools/call":
				return this.#call(msg.id, msg.params, { sid: null, tokenName: who.tokenName, client: check.client }, req);
			default:
				return rpcError("modern_method_not_found", msg.id);
		}
	}

	#discover(): Record<string, unknown> {
		return {
			supportedVersions: SERVED_VERSIONS,
			capabilities: { tools: { listChanged: false } },
			instructions: this.#d.instructions,
			ttlMs: TOOLS_TTL_MS,
			cacheScope: "private",
			...this.#extra,
		};
	}

	/** Serialized once per catalog, like the 2025 answer; the era's members ride along. */
	#toolsBlob(): Blob {
		const list = this.#d.listTools();
		if (this.#listMemo?.list !== list) {
			const result = { tools: list, ttlMs: TOOLS_TTL_MS, cacheScope: "private", ...this.#extra };
			this.#listMemo = { list, json: new Blob([JSON.stringify(result)]) };
		}
		return this.#listMemo.json;
	}

	#call(id: RpcId, params: Record<string, unknown> | undefined, caller: CallerInfo, req: Request) {
		const args = params && "arguments" in params ? params.arguments : {};
		if (typeof params?.name !== "string" || !isRecord(args)) return rpcError("modern_invalid_params", id);
		const modern = { closed: req.signal, resultExtra: this.#extra };
		return this.#d.calls.start(id, params, caller, req.headers.get("accept"), modern, req);
	}
}
