/**
 * The 2026-07-28 era of MCP on the endpoint (contract §13): every POST stands alone (no
 * `initialize`, no session), carries its own `_meta` envelope and routing headers, and a call is
 * cancelled by closing its response stream. Results carry `resultType` and the server's info.
 */
import type { Identity } from "../config/auth.ts";
import { readMessage } from "./body.ts";
import type { CallTable, EraRules } from "./calls.ts";
import { type RpcId, rpcError, rpcErrorMessage, rpcResult } from "./errors.ts";
import { MAX_BODY_BYTES, SERVED_VERSIONS, type ServerInfo } from "./facts.ts";
import { identityEnded } from "./gate.ts";
import { checkModernRequest, META_SERVER_INFO } from "./modern-parse.ts";
import { taskAnswer, taskMethod } from "./task-answer.ts";
import { declaresTasks, TASK_METHODS } from "./task-parse.ts";
import { newTaskId, TASKS_EXTENSION } from "./task-wire.ts";
import type { TaskStore } from "./tasks.ts";
import { toolsListMemo } from "./tools-list.ts";
import type { Connection, McpTool } from "./types.ts";

/** The catalog changes only when the host's tools do, which no notification announces here. */
const TOOLS_TTL_MS = 0;

export interface ModernDeps {
	calls: CallTable;
	serverInfo: ServerInfo;
	instructions: () => string;
	listTools(): readonly McpTool[];
	/** Why `tools/list` or `tools/call` cannot be served (a missing host fact), else null. */
	unavailable(method: "tools/list" | "tools/call"): string | null;
	tasks: TaskStore;
	/** How long a declaring call runs before it becomes a task (TASK_WINDOW_MS; shorter in tests). */
	taskWindowMs: number;
}

export class ModernMcp {
	readonly #d: ModernDeps;
	/**
	 * Closing the stream is the cancel; every result carries `resultType` and `_meta` serverInfo; a call
	 * declaring the Tasks extension in its own `_meta` (contract §17) may be answered with a task handle.
	 */
	readonly #rules: EraRules;
	readonly #toolsList: (id: RpcId) => Response;

	constructor(deps: ModernDeps) {
		this.#d = deps;
		const resultExtra = { resultType: "complete", _meta: { [META_SERVER_INFO]: deps.serverInfo } };
		const answerPort = (params: Record<string, unknown> | undefined) =>
			declaresTasks(params) ? taskAnswer(deps.tasks, newTaskId(), deps.taskWindowMs) : undefined;
		this.#rules = { onClosed: "cancel", resultExtra, invalidParams: "modern_invalid_params", answerPort };
		const cache = { ttlMs: TOOLS_TTL_MS, cacheScope: "private" };
		this.#toolsList = toolsListMemo(() => deps.listTools(), { ...cache, ...resultExtra });
	}

	/** `who` is the caller's token; without sessions each call carries its name itself. */
	async handle(req: Request, who: Identity, conn: Connection): Promise<Response> {
		const msg = await readMessage(req, MAX_BODY_BYTES);
		if (msg instanceof Response) return msg;
		const ended = identityEnded(who, "mcp");
		if (ended) return ended;
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
			case "tools/call": {
				const off = this.#d.unavailable(msg.method);
				if (off !== null) return rpcErrorMessage("host_fact_missing", msg.id, off);
				if (msg.method === "tools/list") return this.#toolsList(msg.id);
				const caller = { sid: null, tokenName: who.tokenName, client: check.client };
				return this.#d.calls.start(this.#rules, { id: msg.id, params: msg.params, caller, req, conn });
			}
			default:
				if (TASK_METHODS.includes(msg.method)) {
					return taskMethod(this.#d.tasks, who.tokenName, msg, this.#rules.resultExtra);
				}
				return rpcError("modern_method_not_found", msg.id);
		}
	}

	#discover(): Record<string, unknown> {
		return {
			supportedVersions: SERVED_VERSIONS,
			capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } },
			instructions: this.#d.instructions(),
			ttlMs: TOOLS_TTL_MS,
			cacheScope: "private",
			...this.#rules.resultExtra,
		};
	}
}
