/** The host's objects as the adapter sees them: only the members it uses, so tests can pass fakes. */

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
	/** The host's loop passes such a tool's arguments through even when they fail its schema. */
	lenientArgValidation?: boolean;
	/** The lines the host's approval prompt shows under `Allow tool: <name>` (omp `formatApprovalPrompt`). */
	formatApprovalDetails?(args: unknown): unknown;
	execute(
		toolCallId: string,
		params: unknown,
		signal?: AbortSignal,
		onUpdate?: (partial: HostToolResult) => void,
		/** None on omp 18.2.1 on; Main's settings alone where the gate reads them only from here (gate-check.ts). */
		context?: { settings: unknown },
	): Promise<HostToolResult>;
}

export interface HostSession {
	getAllToolNames(): string[];
	getToolByName(name: string): HostTool | undefined;
	agent?: { emitExternalEvent?(event: Record<string, unknown>): void };
	asyncJobManager?: HostJobManager;
	/** Its extension runner: the UI context the tool wrapper's approval prompts go through. */
	extensionRunner?: { getUIContext(): unknown; hasHandlers?(event: string): boolean };
}

export interface HostAccess {
	/** The live Main session, or null when it is parked, aborted or not built yet. */
	mainSession(): HostSession | null;
	/** The entry's `pi.getAllTools()`: the catalog when there is no live Main. */
	fallbackTools(): Array<{ name: string; description?: string; parameters?: unknown }>;
	/** The host's `toolWireSchema` (JSON Schema 2020-12 from the tool's parameters). */
	wireSchema(tool: { name: string; description?: string; parameters?: unknown }): Record<string, unknown>;
	/** The host's `validateToolArguments`: normalized arguments, or why not (its message naming what failed). */
	validateArgs?(
		tool: HostTool,
		name: string,
		args: Record<string, unknown>,
	): { ok: true; args: unknown } | { ok: false; why: string };
	log(line: string): void;
	/** A call was refused as not behind the gate: the host facts are probed again at once (said on stderr). */
	gateRefused?(): void;
}

/** What a tool failure says when the host threw something that is neither an Error nor a string. */
export const TOOL_FAILED = "tool failed";
