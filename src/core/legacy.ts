/**
 * The 2025 eras of MCP on the endpoint (contract §5–§6): `initialize` hands out a session, every
 * other message needs one bound to the caller's token, and `notifications/cancelled` cancels.
 */
import type { Identity } from "../config/auth.ts";
import { readMessage } from "./body.ts";
import type { CallTable } from "./calls.ts";
import { clientName } from "./client-name.ts";
import { type RpcId, rpcError, rpcResult, rpcResultJson } from "./errors.ts";
import type { Envelope } from "./jsonrpc.ts";
import type { Session, SessionTable } from "./sessions.ts";
import type { McpTool } from "./types.ts";

export const SUPPORTED_VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"] as const;
const LATEST_VERSION = "2025-11-25";
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const accept = (req: Request): string | null => req.headers.get("accept");

export interface LegacyDeps {
	sessions: SessionTable;
	calls: CallTable;
	serverInfo: { name: string; version: string };
	instructions: string;
	listTools(): readonly McpTool[];
}

export class LegacyMcp {
	#listMemo: { list: readonly McpTool[]; json: Blob } | null = null;
	readonly #d: LegacyDeps;

	constructor(deps: LegacyDeps) {
		this.#d = deps;
	}

	/**
	 * The version header was checked by the caller (server.ts routes each request to its era). `who` is
	 * the caller's token: sessions are bound to its digest and labelled with its name.
	 */
	async handle(req: Request, who: Identity): Promise<Response> {
		if (req.method === "DELETE") {
			const s = this.#guardSession(req, who);
			if (s instanceof Response) return s;
			this.#d.sessions.delete(s.sid);
			return new Response(null, { status: 204 });
		}
		const msg = await readMessage(req, MAX_BODY_BYTES);
		if (msg instanceof Response) return msg;
		if (msg.kind === "request" && msg.method === "initialize") return this.#initialize(msg.id, msg.params, who);
		const session = this.#guardSession(req, who, msg.kind === "request" ? msg.id : null);
		if (session instanceof Response) return session;
		if (msg.kind !== "request") {
			this.#notification(msg, session);
			return new Response(null, { status: 202 });
		}
		return this.#dispatch(msg, session, req);
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
			typeof asked === "string" && (SUPPORTED_VERSIONS as readonly string[]).includes(asked) ? asked : LATEST_VERSION;
		const client = clientName(params?.clientInfo);
		const session = this.#d.sessions.create(who.secretDigest, version, { tokenName: who.tokenName, client });
		const result = {
			protocolVersion: version,
			capabilities: { tools: { listChanged: false } },
			serverInfo: this.#d.serverInfo,
			instructions: this.#d.instructions,
		};
		return rpcResult(id, result, { "mcp-session-id": session.sid });
	}

	/** The catalog is about 55 KB of JSON: serialized again only when listTools hands out a new list. */
	#toolsBlob(): Blob {
		const list = this.#d.listTools();
		if (this.#listMemo?.list !== list) this.#listMemo = { list, json: new Blob([JSON.stringify({ tools: list })]) };
		return this.#listMemo.json;
	}

	#notification(msg: Envelope, session: Session): void {
		if (msg.kind !== "notification" || msg.method !== "notifications/cancelled") return;
		const requestId = msg.params?.requestId;
		if (typeof requestId !== "string" && typeof requestId !== "number") return;
		this.#d.calls.cancel(session.sid, requestId);
	}

	#dispatch(msg: Extract<Envelope, { kind: "request" }>, session: Session, req: Request): Response | Promise<Response> {
		switch (msg.method) {
			case "ping":
				return rpcResult(msg.id, {});
			case "tools/list":
				return rpcResultJson(msg.id, this.#toolsBlob());
			case "tools/call": {
				const caller = { sid: session.sid, tokenName: session.tokenName, client: session.client };
				return this.#d.calls.start(msg.id, msg.params, caller, accept(req), undefined, req);
			}
			default:
				return rpcError("method_not_found", msg.id);
		}
	}
}
