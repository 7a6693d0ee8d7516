/**
 * The 2026-07-28 era of MCP on the endpoint (contract §13): every POST stands alone (no
 * `initialize`, no session), carries its own `_meta` envelope and routing headers, and a call is
 * cancelled by closing its response stream. Results carry `resultType` and the server's info.
 */
import type { Identity } from "../config/auth.ts";
import { readMessage } from "./body.ts";
import { BOTH_ERAS, BOTH_ERAS_CAPABILITIES } from "./both-eras.ts";
import type { CallTable, EraRules } from "./calls.ts";
import { ERRORS, type ErrorKind, rpcError } from "./errors.ts";
import { MAX_BODY_BYTES, SERVED_VERSIONS, type ServerInfo } from "./facts.ts";
import { EraReplies, type HostMethod, type Method, MethodTable, needsHost } from "./methods.ts";
import { checkModernRequest, META_SERVER_INFO } from "./modern-parse.ts";
import { taskAnswer, taskMethod } from "./task-answer.ts";
import { declaresTasks, TASK_METHODS } from "./task-parse.ts";
import { newTaskId, TASKS_EXTENSION } from "./task-wire.ts";
import type { TaskStore } from "./tasks.ts";
import { toolsListMemo } from "./tools-list.ts";
import type { Clock, Connection, McpTool } from "./types.ts";

/** The catalog changes only when the host's tools do, which no notification announces here. */
const TOOLS_TTL_MS = 0;

/** The era's rule (contract §13): a client's fault is an HTTP error, not a 200, by the row's JSON-RPC code. */
const CLIENT_FAULT: Readonly<Record<number, number>> = {
	[ERRORS.invalid_params.code]: 400,
	[ERRORS.method_not_found.code]: 404,
};

/** The era's own status per row, derived from its rule: a new row answered 200 in 2025 needs no entry here. @internal */
export const MODERN_STATUS: Readonly<Partial<Record<ErrorKind, number>>> = modernStatus(ERRORS);

/** @internal */
export function modernStatus(rows: Readonly<Record<string, { status: number; code: number }>>): Record<string, number> {
	const out: Record<string, number> = {};
	for (const [kind, row] of Object.entries(rows)) {
		const status = row.status === 200 ? CLIENT_FAULT[row.code] : undefined;
		if (status !== undefined) out[kind] = status;
	}
	return out;
}

export interface ModernDeps {
	calls: CallTable;
	serverInfo: ServerInfo;
	instructions: () => string;
	listTools(): readonly McpTool[];
	/** Why `tools/list` or `tools/call` cannot be served (a missing host fact), else null. */
	unavailable(method: HostMethod): string | null;
	/** Both eras' default answer: SSE when the call asks for progress, else JSON (answers.ts `streamOrJson`). */
	answerPort: EraRules["answerPort"];
	tasks: TaskStore;
	/** The server's clock: the task window is timed on it. */
	clock: Clock;
	/** How long a declaring call runs before it becomes a task (TASK_WINDOW_MS; shorter in tests). */
	taskWindowMs: number;
}

/** What every 2026-07-28 method gets besides its request: the caller (token, client), the request, its connection. */
interface ModernCall {
	who: Identity;
	client: string | null;
	req: Request;
	conn: Connection;
}

export class ModernMcp {
	readonly #methods: MethodTable<ModernCall>;

	constructor(deps: ModernDeps) {
		const resultExtra = { resultType: "complete", _meta: { [META_SERVER_INFO]: deps.serverInfo } };
		const replies = new EraReplies(MODERN_STATUS, resultExtra);
		/**
		 * Closing the stream is the cancel; a call declaring the Tasks extension in its own `_meta` (contract
		 * §17) may be answered with a task handle.
		 */
		const rules: EraRules = {
			onClosed: "cancel",
			replies,
			answerPort: (params, req) =>
				declaresTasks(params)
					? taskAnswer(deps.tasks, deps.clock, newTaskId(), deps.taskWindowMs)
					: deps.answerPort(params, req),
		};
		const cache = { ttlMs: TOOLS_TTL_MS, cacheScope: "private" };
		const toolsList = toolsListMemo(() => deps.listTools(), { ...cache, ...resultExtra });
		const task: Method<ModernCall> = (msg, { who }) => taskMethod(deps.tasks, who.tokenName, msg, replies);
		this.#methods = new MethodTable<ModernCall>(replies, {
			...BOTH_ERAS,
			"server/discover": msg => replies.result(msg.id, discover(deps)),
			"tools/list": needsHost(deps.unavailable, "tools/list", msg => toolsList(msg.id)),
			"tools/call": needsHost(deps.unavailable, "tools/call", (msg, { who, client, req, conn }) => {
				const caller = { sid: null, tokenName: who.tokenName, client };
				return deps.calls.start(rules, { id: msg.id, params: msg.params, caller, req, conn });
			}),
			...Object.fromEntries(TASK_METHODS.map(name => [name, task])),
		});
	}

	/** `who` is the caller's token; without sessions each call carries its name itself. */
	async handle(req: Request, who: Identity, conn: Connection): Promise<Response> {
		const msg = await readMessage(req, MAX_BODY_BYTES, who);
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
		if (!check.ok) return rpcError(check.code, msg.id);
		return this.#methods.dispatch(msg, { who, client: check.client, req, conn });
	}
}

function discover(deps: ModernDeps): Record<string, unknown> {
	return {
		supportedVersions: SERVED_VERSIONS,
		capabilities: { ...BOTH_ERAS_CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } },
		instructions: deps.instructions(),
		ttlMs: TOOLS_TTL_MS,
		cacheScope: "private",
	};
}
