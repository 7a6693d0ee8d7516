/**
 * How an era answers and dispatches (contract §6, §13): its JSON-RPC methods are a table (as the MCP SDK's
 * request handlers are), an unknown one answered `method_not_found`; its own HTTP status for the rows where it
 * differs from the row's; and the members every result of the era carries, added here so no handler spreads
 * them. A new method is a row of its era's table, or of `BOTH_ERAS` (both-eras.ts) when both serve it alike.
 */
import { type ErrorKind, type RpcId, rpcErrorAs, rpcResult } from "./errors.ts";
import type { Envelope } from "./jsonrpc.ts";

export type RpcRequest = Extract<Envelope, { kind: "request" }>;

/** One method: the request, what the era hands every method (the caller, the request, …) and the era's voice. */
export type Method<C> = (msg: RpcRequest, ctx: C, era: EraReplies) => Response | Promise<Response>;

/** An era's voice: its statuses and result members. */
export class EraReplies {
	/** The era's HTTP status for a row where it differs (2026-07-28: a client's fault is an HTTP error). */
	readonly #status: Readonly<Partial<Record<ErrorKind, number>>>;
	/** Members every result of the era carries (2026-07-28: `resultType`, `_meta` serverInfo). */
	readonly extra: Readonly<Record<string, unknown>>;

	constructor(status: Readonly<Partial<Record<ErrorKind, number>>>, extra: Readonly<Record<string, unknown>>) {
		this.#status = status;
		this.extra = extra;
	}

	/** A result body with the era's members. */
	body(result: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
		return { ...result, ...this.extra };
	}

	result(id: RpcId, result: Readonly<Record<string, unknown>>): Response {
		return rpcResult(id, this.body(result));
	}

	/** The row at the era's status; `message` replaces the row's, `data` rides along when given. */
	error(kind: ErrorKind, id: RpcId | null, message?: string, data?: unknown): Response {
		return rpcErrorAs(this.#status[kind], kind, id, message, data);
	}
}

/** An era's methods by name; anything else is `method_not_found` at the era's status. */
export class MethodTable<C> {
	readonly #methods: ReadonlyMap<string, Method<C>>;
	readonly #replies: EraReplies;

	constructor(replies: EraReplies, methods: Readonly<Record<string, Method<C>>>) {
		this.#replies = replies;
		this.#methods = new Map(Object.entries(methods));
	}

	dispatch(msg: RpcRequest, ctx: C): Response | Promise<Response> {
		const method = this.#methods.get(msg.method);
		return method ? method(msg, ctx, this.#replies) : this.#replies.error("method_not_found", msg.id);
	}
}

/** The methods that need the host's tools (src/host/facts.ts). */
export type HostMethod = "tools/list" | "tools/call";

/** `run`, unless a host fact `method` needs is missing: then `host_fact_missing` naming it, and nothing runs. */
export function needsHost<C>(
	unavailable: (method: HostMethod) => string | null,
	method: HostMethod,
	run: Method<C>,
): Method<C> {
	return (msg, ctx, era) => {
		const off = unavailable(method);
		return off === null ? run(msg, ctx, era) : era.error("host_fact_missing", msg.id, off);
	};
}
