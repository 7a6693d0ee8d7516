/**
 * Host adapter: turns the Main session's tool registry into MCP tools and runs calls through the
 * host's own wrapper (approval gate included). The host is reached only through `HostAccess`,
 * which the entry fills from the live process; tests pass a fake.
 * Invariants: catalog, gate and execution read the same registry at each call; `execute` gets the
 * context the gate's trial chose, so the gate applies Main's settings (gate-check.ts); arguments pass
 * the tool's own schema first (host/validate.ts); a failed TUI emit never alters a result.
 */
import type { ContentBlock, McpTool, ToolCallOutcome, ToolCallRequest } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { Catalog } from "./catalog.ts";
import { type GateUse, gateFor } from "./gate-check.ts";
import { lendCallSignal, type PromptUi, type Retitle, withCallSignal } from "./prompt-signal.ts";
import { approvalTitle, dialogRowWidth, dialogTitle, hostDetails } from "./prompt-text.ts";
import {
	type HostAccess,
	type HostJobManager,
	type HostSession,
	type HostTool,
	type HostToolResult,
	TOOL_FAILED,
} from "./shapes.ts";
import { checkArgs } from "./validate.ts";

export type { HostAccess, HostJobManager, HostSession } from "./shapes.ts";

/** @internal */
export const MAIN_UNAVAILABLE = "main session not available";
/** @internal */
export const notExposed = (name: string): string => `tool '${name}' is not exposed by this bridge`;
/** @internal */
export const notGated = (name: string): string =>
	`tool '${name}' is not behind an approval gate that asks as the host's settings say (host fact 'approval-gate'); not run`;

/** Maps host content blocks to MCP ones: text and image as they are, anything else as its JSON. @internal */
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

export class HostBridge {
	readonly #host: HostAccess;
	readonly #catalog: Catalog;
	constructor(host: HostAccess) {
		this.#host = host;
		this.#catalog = new Catalog(host);
	}

	/** The Main session's tools as MCP tools (see `Catalog`). */
	listTools(): McpTool[] {
		return this.#catalog.list();
	}

	async callTool(req: ToolCallRequest): Promise<ToolCallOutcome> {
		let admitted: Admitted | ToolCallOutcome;
		try {
			admitted = await this.#admit(req);
		} catch (err) {
			// A host that throws while the call is checked: refused, never begun (nothing ran).
			return refusal(`the host failed while the call was checked (${errorText(err, TOOL_FAILED)}); not run`);
		}
		if (!("gate" in admitted)) return admitted;
		const { main, tool, gate, args } = admitted;
		// The start record is on disk before the tool runs; a call refused above never began.
		await req.begin?.();
		this.#emit(main, { type: "tool_execution_start", toolCallId: req.callId, toolName: req.name, args });
		const onUpdate = req.onProgress
			? (partial: HostToolResult) => {
					try {
						req.onProgress?.(textOf(partial?.content));
					} catch {}
				}
			: undefined;
		let outcome: ToolCallOutcome;
		try {
			const ui = main.extensionRunner?.getUIContext() as PromptUi | undefined;
			if (typeof ui?.select === "function") lendCallSignal(ui);
			const result = await withCallSignal(
				req.signal,
				() => gate.execute.call(tool, req.callId, args, req.signal, onUpdate, gate.context) as Promise<HostToolResult>,
				{ token: req.caller.tokenName, take: onEnd => req.take("prompts", onEnd) },
				this.#retitle(req, tool, args, main),
			);
			const jobId = backgroundedJobId(result);
			outcome =
				jobId !== null && main.asyncJobManager
					? await this.#awaitJob(main.asyncJobManager, jobId, req)
					: { content: mapContent(result?.content), isError: result?.isError === true };
		} catch (err) {
			// The prompt queue ended the call before any prompt showed: a refusal, never a deny (prompt-queue.ts).
			const queued = err instanceof Error && err.name === "QueueRefusal";
			outcome = queued ? refusal(err.message) : failure(errorText(err, TOOL_FAILED));
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
	 * How the call's dialogs are titled (prompt-text.ts): an approval from the arguments the tool runs
	 * with, in the tool's schema order, beside the tool's own detail lines; worked out only when one opens.
	 */
	#retitle(req: ToolCallRequest, tool: HostTool, args: Record<string, unknown>, main: HostSession): Retitle {
		return (title, options) => {
			// The TUI draws on this process's stdout; under rpc it is a pipe and lines stay whole.
			const width = dialogRowWidth(process.stdout);
			if (!(options.includes("Approve") && options.includes("Deny"))) return dialogTitle(title, req.caller, width);
			let details: string[] | null = null;
			try {
				details = hostDetails(tool.formatApprovalDetails?.(args));
			} catch {
				// The host failed on it too before asking; the title then shows the host's own text.
			}
			const order = this.#catalog.argumentOrder(req.name, tool);
			// A `tool_call` handler may have revised the arguments omp asks about: the title is then omp's own.
			const revisable = revisedBy(main);
			return approvalTitle(title, { tool: req.name, args, order, details, caller: req.caller, width, revisable });
		};
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

	/** Main, the tool behind its gate and the checked arguments; or the refusal. */
	async #admit(req: ToolCallRequest): Promise<Admitted | ToolCallOutcome> {
		const main = this.#host.mainSession();
		if (main === null) return refusal(MAIN_UNAVAILABLE);
		const tool = main.getAllToolNames().includes(req.name) ? main.getToolByName(req.name) : undefined;
		if (!tool) return refusal(notExposed(req.name));
		// Only through omp's own gate: a tool reached around it would run unprompted (gate-check.ts).
		const gate = await gateFor(tool, main);
		// The execute called is the one checked: a tool whose execute reads otherwise now is refused.
		if (gate === null || tool.execute !== gate.execute) {
			this.#host.gateRefused?.();
			return refusal(notGated(req.name));
		}
		const checked = checkArgs(this.#host, tool, req.name, req.args);
		if (!checked.ok) return { ...refusal(checked.why), invalidArgs: checked.why };
		return { main, tool, gate, args: checked.args };
	}

	#noEventsSaid = false;
	/** Once per bridge: the host's session cannot show remote calls (host fact 'call-events'). */
	#sayNoEvents(): void {
		if (this.#noEventsSaid) return;
		this.#noEventsSaid = true;
		this.#host.log(
			"a2a-bridge: the host's session has no agent.emitExternalEvent: remote calls run but are not shown there (host fact 'call-events')",
		);
	}

	/** UI events leave the call's path: they run after the current I/O turn, in the order emitted. */
	#emit(main: HostSession, event: Record<string, unknown>): void {
		setImmediate(() => {
			try {
				const emit = main.agent?.emitExternalEvent;
				if (typeof emit === "function") emit.call(main.agent, event);
				else this.#sayNoEvents();
			} catch (err) {
				this.#host.log(
					`a2a-bridge: could not show ${String(event.type)} in the host UI (${errorText(err, TOOL_FAILED)})`,
				);
			}
		});
	}
}

/** The job id when a result is the host's "Backgrounded as job" stub, else null. @internal */
export function backgroundedJobId(result: HostToolResult | undefined): string | null {
	const async = (result?.details as { async?: { state?: unknown; jobId?: unknown } } | undefined)?.async;
	return async?.state === "running" && typeof async.jobId === "string" ? async.jobId : null;
}

/** The text blocks of a host partial result, joined. @internal */
export function textOf(content: unknown): string {
	if (!Array.isArray(content)) return "";
	return content
		.filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
		.map(b => b.text)
		.join("\n");
}

/** Whether another extension on Main may revise a call's arguments before omp's gate asks; unknown reads as yes. */
function revisedBy(main: HostSession): boolean {
	try {
		const runner = main.extensionRunner;
		return typeof runner?.hasHandlers !== "function" || runner.hasHandlers("tool_call") === true;
	} catch {
		return true;
	}
}

interface Admitted {
	main: HostSession;
	tool: HostTool;
	gate: GateUse;
	args: Record<string, unknown>;
}

const failure = (text: string): ToolCallOutcome => ({ content: [{ type: "text", text }], isError: true });
const refusal = (text: string): ToolCallOutcome => ({ ...failure(text), refused: true });
