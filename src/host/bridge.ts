/**
 * Host adapter: turns the Main session's tool registry into MCP tools and runs calls through the
 * host's own wrapper (approval gate included). The host is reached only through `HostAccess`,
 * which the entry fills from the live process; tests pass a fake.
 * Invariants: catalog, gate and execution read the same registry at each call; `execute` gets an
 * `undefined` context so the gate applies Main's settings; a failed TUI emit never alters a result.
 */
import type { ContentBlock, McpTool, ToolCallOutcome, ToolCallRequest } from "../core/types.ts";

export interface HostToolResult {
	content?: unknown[];
	isError?: boolean;
	details?: unknown;
}

/** The part of the host's AsyncJobManager used to take over a backgrounded bash job. */
export interface HostJobManager {
	acknowledgeDeliveries(jobIds: string[]): number;
	consumeJobResults(jobIds: string[]): number;
	getJob(
		id: string,
	): { status: string; promise: Promise<unknown>; resultText?: string; errorText?: string } | undefined;
	cancel(id: string): boolean;
}

export interface HostTool {
	name: string;
	description?: string;
	parameters?: unknown;
	approval?: unknown;
	execute(
		toolCallId: string,
		params: unknown,
		signal?: AbortSignal,
		onUpdate?: (partial: HostToolResult) => void,
		context?: undefined,
	): Promise<HostToolResult>;
}

export interface HostSession {
	getAllToolNames(): string[];
	getToolByName(name: string): HostTool | undefined;
	agent?: { emitExternalEvent?(event: Record<string, unknown>): void };
	asyncJobManager?: HostJobManager;
}

export interface HostAccess {
	/** The live Main session, or null when it is parked, aborted or not built yet. */
	mainSession(): HostSession | null;
	/** The entry's `pi.getAllTools()`: the catalog when there is no live Main. */
	fallbackTools(): Array<{ name: string; description?: string; parameters?: unknown }>;
	/** The host's `toolWireSchema` (JSON Schema 2020-12 from the tool's parameters). */
	wireSchema(tool: { name: string; description?: string; parameters?: unknown }): Record<string, unknown>;
	log(line: string): void;
}

export const MAIN_UNAVAILABLE = "main session not available";
export const notExposed = (name: string): string => `tool '${name}' is not exposed by this bridge`;

const FALLBACK_SCHEMA = { type: "object" } as const;
export const LIST_CACHE_MS = 1000;

/** MCP annotations from the host tier for empty arguments; nothing when the tool declares no tier. */
export function annotationsFor(approval: unknown): Record<string, boolean> | undefined {
	let decision: unknown = approval;
	if (typeof approval === "function") {
		try {
			decision = (approval as (args: unknown) => unknown)({});
		} catch {
			return undefined;
		}
	}
	const tier =
		typeof decision === "string" ? decision : ((decision as { tier?: unknown } | null | undefined)?.tier ?? undefined);
	if (tier === "read") return { readOnlyHint: true };
	if (tier === "write") return { readOnlyHint: false, destructiveHint: true };
	if (tier === "exec") return { readOnlyHint: false, destructiveHint: true, openWorldHint: true };
	return undefined;
}

/** Maps host content blocks to MCP ones: text and image as they are, anything else as its JSON. */
export function mapContent(blocks: unknown): ContentBlock[] {
	if (!Array.isArray(blocks)) return [];
	return blocks.map(b => {
		const block = b as Record<string, unknown> | null;
		if (block?.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
		if (block?.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
			return { type: "image", data: block.data, mimeType: block.mimeType };
		}
		let text: string;
		try {
			text = JSON.stringify(b) ?? String(b);
		} catch {
			text = String(b);
		}
		return { type: "text", text };
	});
}

export function errorText(err: unknown): string {
	if (err instanceof Error) return err.message || err.name;
	return typeof err === "string" ? err : "tool failed";
}

export class HostBridge {
	readonly #host: HostAccess;
	readonly #schemas = new WeakMap<object, Record<string, unknown>>();
	#listCache: {
		at: number;
		names: string[];
		tools: Array<HostTool | undefined>;
		params: unknown[];
		list: McpTool[];
	} | null = null;

	constructor(host: HostAccess) {
		this.#host = host;
	}

	/**
	 * The registry's names are read at every call; the host recomputes descriptions on each read
	 * (about 0.5 ms for the built-ins), so the described list is reused for LIST_CACHE_MS while
	 * the same tool objects, with the same parameters, are registered under the same names.
	 */
	listTools(): McpTool[] {
		const main = this.#host.mainSession();
		if (main === null) return this.#host.fallbackTools().map(t => this.#describe(t, undefined));
		const names = main.getAllToolNames();
		const tools = names.map(name => main.getToolByName(name));
		const now = Date.now();
		const hit = this.#listCache;
		if (
			hit &&
			now - hit.at < LIST_CACHE_MS &&
			hit.names.length === names.length &&
			hit.names.every((n, i) => n === names[i] && hit.tools[i] === tools[i] && hit.params[i] === tools[i]?.parameters)
		) {
			return hit.list;
		}
		const list: McpTool[] = [];
		names.forEach((name, i) => {
			const tool = tools[i];
			if (tool) list.push(this.#describe({ ...pick(tool), name }, tool.approval));
		});
		this.#listCache = { at: now, names, tools, params: tools.map(t => t?.parameters), list };
		return list;
	}

	async callTool(req: ToolCallRequest): Promise<ToolCallOutcome> {
		const main = this.#host.mainSession();
		if (main === null) return failure(MAIN_UNAVAILABLE);
		const tool = main.getAllToolNames().includes(req.name) ? main.getToolByName(req.name) : undefined;
		if (!tool) return failure(notExposed(req.name));
		this.#emit(main, { type: "tool_execution_start", toolCallId: req.callId, toolName: req.name, args: req.args });
		const onUpdate = req.onProgress
			? (partial: HostToolResult) => {
					try {
						req.onProgress?.(textOf(partial?.content));
					} catch {}
				}
			: undefined;
		let outcome: ToolCallOutcome;
		try {
			const result = await tool.execute(req.callId, req.args, req.signal, onUpdate, undefined);
			const jobId = backgroundedJobId(result);
			outcome =
				jobId !== null && main.asyncJobManager
					? await this.#awaitJob(main.asyncJobManager, jobId, req)
					: { content: mapContent(result?.content), isError: result?.isError === true };
		} catch (err) {
			outcome = failure(errorText(err));
		}
		this.#emit(main, {
			type: "tool_execution_end",
			toolCallId: req.callId,
			toolName: req.name,
			result: { content: outcome.content, isError: outcome.isError },
			isError: outcome.isError,
		});
		return outcome;
	}

	/**
	 * The host moved a long bash into a background job and answered with a stub. Take the job over:
	 * acknowledge its delivery so no completion notice wakes the host's agent, wait for it to settle
	 * and return its real output. A cancel of the remote call cancels the job.
	 */
	async #awaitJob(jobs: HostJobManager, jobId: string, req: ToolCallRequest): Promise<ToolCallOutcome> {
		jobs.acknowledgeDeliveries([jobId]);
		const job = jobs.getJob(jobId);
		if (!job) return failure(`background job ${jobId} vanished before it finished`);
		req.onBackgrounded?.();
		const onAbort = () => jobs.cancel(jobId);
		req.signal.addEventListener("abort", onAbort, { once: true });
		try {
			await job.promise.catch(() => {});
		} finally {
			req.signal.removeEventListener("abort", onAbort);
		}
		jobs.consumeJobResults([jobId]);
		if (job.status === "completed") return { content: [{ type: "text", text: job.resultText ?? "" }], isError: false };
		if (job.status === "cancelled") return failure(job.errorText || "Command aborted");
		return failure(job.errorText || job.resultText || `background job ${jobId} failed`);
	}

	#describe(tool: { name: string; description?: string; parameters?: unknown }, approval: unknown): McpTool {
		const annotations = annotationsFor(approval);
		return {
			name: tool.name,
			description: typeof tool.description === "string" ? tool.description : "",
			inputSchema: this.#schema(tool),
			...(annotations ? { annotations } : {}),
		};
	}

	#schema(tool: { name: string; description?: string; parameters?: unknown }): Record<string, unknown> {
		const key = tool.parameters;
		const cacheable = (typeof key === "object" && key !== null) || typeof key === "function";
		const hit = cacheable ? this.#schemas.get(key as object) : undefined;
		if (hit) return hit;
		let schema: Record<string, unknown>;
		try {
			const s = this.#host.wireSchema(tool);
			schema = s && typeof s === "object" && s.type === "object" ? s : { ...FALLBACK_SCHEMA };
		} catch (err) {
			this.#host.log(
				`a2a-bridge: schema of tool '${tool.name}' not convertible (${errorText(err)}); listed as {"type":"object"}`,
			);
			schema = { ...FALLBACK_SCHEMA };
		}
		if (cacheable) this.#schemas.set(key as object, schema);
		return schema;
	}

	/** UI events leave the call's path: they run after the current I/O turn, in the order emitted. */
	#emit(main: HostSession, event: Record<string, unknown>): void {
		setImmediate(() => {
			try {
				main.agent?.emitExternalEvent?.(event);
			} catch (err) {
				this.#host.log(`a2a-bridge: could not show ${String(event.type)} in the host UI (${errorText(err)})`);
			}
		});
	}
}

/** The job id when a result is the host's "Backgrounded as job" stub, else null. */
export function backgroundedJobId(result: HostToolResult | undefined): string | null {
	const async = (result?.details as { async?: { state?: unknown; jobId?: unknown } } | undefined)?.async;
	return async?.state === "running" && typeof async.jobId === "string" ? async.jobId : null;
}

/** The text blocks of a host partial result, joined. */
export function textOf(content: unknown): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
		.map(b => b.text)
		.join("\n");
}

const failure = (text: string): ToolCallOutcome => ({ content: [{ type: "text", text }], isError: true });

const pick = (t: HostTool) => ({ description: t.description, parameters: t.parameters });
