/**
 * The 2025 eras of MCP on the endpoint (contract §5–§6): `initialize` hands out a session, every
 * other message needs one bound to the caller's secret, and `notifications/cancelled` cancels.
 */
import type { Identity } from "../config/auth.ts";
import { readMessage } from "./body.ts";
import { BOTH_ERAS, BOTH_ERAS_CAPABILITIES } from "./both-eras.ts";
import type { CallTable, EraRules } from "./calls.ts";
import { clientName } from "./client-name.ts";
import { type RpcId, rpcError, rpcResult } from "./errors.ts";
import { LATEST_LEGACY_VERSION, LEGACY_VERSIONS, MAX_BODY_BYTES, type ServerInfo } from "./facts.ts";
import type { Envelope } from "./jsonrpc.ts";
import { EraReplies, type HostMethod, MethodTable, needsHost } from "./methods.ts";
import type { Session, SessionTable } from "./sessions.ts";
import { toolsListMemo } from "./tools-list.ts";
import type { Connection, McpTool } from "./types.ts";

export interface LegacyDeps {
	sessions: SessionTable;
	calls: CallTable;
	serverInfo: ServerInfo;
	instructions: () => string;
	listTools(): readonly McpTool[];
	/** Why `tools/list` or `tools/call` cannot be served (a missing host fact), else null. */
	unavailable(method: HostMethod): string | null;
	/** Both eras' default answer: SSE when the call asks for progress, else JSON (answers.ts `streamOrJson`). */
	answerPort: EraRules["answerPort"];
}

/** What every 2025 method gets besides its request: the session it came on, the request and its connection. */
interface LegacyCall {
	session: Session;
	req: Request;
	conn: Connection;
}

export class LegacyMcp {
	readonly #d: LegacyDeps;
	readonly #methods: MethodTable<LegacyCall>;

	constructor(deps: LegacyDeps) {
		this.#d = deps;
		const toolsList = toolsListMemo(() => deps.listTools());
		// Results carry nothing beside their own members; statuses are the rows'.
		const replies = new EraReplies({}, {});
		/** A caller that goes away does not cancel (2025 spec): its call runs on, marked abandoned. */
		const rules: EraRules = { onClosed: "abandon", replies, answerPort: deps.answerPort };
		this.#methods = new MethodTable<LegacyCall>(replies, {
			...BOTH_ERAS,
			ping: msg => replies.result(msg.id, {}),
			"tools/list": needsHost(deps.unavailable, "tools/list", msg => toolsList(msg.id)),
			"tools/call": needsHost(deps.unavailable, "tools/call", (msg, { session, req, conn }) => {
				const caller = { sid: session.sid, tokenName: session.tokenName, client: session.client };
				return deps.calls.start(rules, { id: msg.id, params: msg.params, caller, req, conn });
			}),
		});
	}

	/**
	 * The version header was checked by the caller (server.ts routes each request to its era). `who` is
	 * the caller's token: sessions are bound to its secret's digest and labelled with its name.
	 */
	async handle(req: Request, who: Identity, conn: Connection): Promise<Response> {
		if (req.method === "DELETE") {
			const s = this.#guardSession(req, who);
			if (s instanceof Response) return s;
			this.#d.sessions.delete(s.sid);
			return new Response(null, { status: 204 });
		}
		const msg = await readMessage(req, MAX_BODY_BYTES, who);
		if (msg instanceof Response) return msg;
		if (msg.kind === "request" && msg.method === "initialize") return this.#initialize(msg.id, msg.params, who);
		const session = this.#guardSession(req, who, msg.kind === "request" ? msg.id : null);
		if (session instanceof Response) return session;
		if (msg.kind !== "request") {
			this.#notification(msg, session);
			return new Response(null, { status: 202 });
		}
		return this.#methods.dispatch(msg, { session, req, conn });
	}

	#guardSession(req: Request, who: Identity, id: RpcId | null = null): Session | Response {
		const sid = req.headers.get("mcp-session-id");
		if (sid === null || sid === "") return rpcError("session_required", id);
		const found = this.#d.sessions.touch(sid, who.secretDigest);
		return found.ok ? found.session : rpcError("session_not_found", id);
	}

	#initialize(id: RpcId, params: Record<string, unknown> | undefined, who: Identity): Response {
		const asked = params?.protocolVersion;
		const version =
			typeof asked === "string" && (LEGACY_VERSIONS as readonly string[]).includes(asked)
				? asked
				: LATEST_LEGACY_VERSION;
		const client = clientName(params?.clientInfo);
		const opened = this.#d.sessions.create(who.secretDigest, { tokenName: who.tokenName, client });
		if (!opened.ok) return rpcError("server_busy", id);
		const result = {
			protocolVersion: version,
			capabilities: BOTH_ERAS_CAPABILITIES,
			serverInfo: this.#d.serverInfo,
			instructions: this.#d.instructions(),
		};
		return rpcResult(id, result, { "mcp-session-id": opened.session.sid });
	}

	#notification(msg: Envelope, session: Session): void {
		if (msg.kind !== "notification" || msg.method !== "notifications/cancelled") return;
		const requestId = msg.params?.requestId;
		if (typeof requestId !== "string" && typeof requestId !== "number") return;
		this.#d.calls.cancel(session.sid, requestId);
	}
}
