/** A fake omp host for the host-facts probe (src/host/facts-probe.ts): every fact holds until a test spoils one. */
import { behindGate } from "./gate.ts";

export type Obj = Record<string, unknown>;

/**
 * A host as omp 18.2.3 shapes it, in the members the bridge reaches (host-omp-18.2.3.md §2-§5, §9): each
 * tool behind the gate (a wrapper holding the tool and Main's runner), one UI context, Main's cwd.
 */
export function fakeHost() {
	const ui = { select: async () => "Approve" };
	const runner: Obj = { getUIContext: () => ui };
	const tool = (name: string, extra: Obj = {}): Obj =>
		behindGate(
			{ name, description: name, parameters: { type: "object" }, execute: async () => ({ content: [] }), ...extra },
			runner as never,
		) as unknown as Obj;
	const tools: Record<string, Obj> = {
		read: tool("read"),
		bash: tool("bash", { formatApprovalDetails: () => ["Command: x"] }),
		write: tool("write", { formatApprovalDetails: () => [] }),
		todo: tool("todo", { lenientArgValidation: true }),
	};
	const session: Obj = {
		getAllToolNames: () => Object.keys(tools),
		getToolByName: (n: string) => tools[n],
		extensionRunner: runner,
		sessionManager: { getCwd: () => "/home/lab/work", getSessionId: () => "s1" },
		asyncJobManager: { acknowledgeDeliveries() {}, consumeJobResults() {}, getJob() {}, cancel() {} },
		modelRegistry: {
			getAll: () => [],
			registerProvider() {},
			unregisterProvider() {},
			awaitInitialBackgroundRefresh: async () => {},
			authStorage: { hasAuth: (p: string) => p === "anthropic" },
		},
		agent: { setModel() {}, emitExternalEvent() {} },
		settings: { get() {}, override() {}, clearOverride() {} },
	};
	// omp builds Main's runner with the session's own settings (sdk.ts), which its gate reads for a bare execute.
	runner.sessionSettings = session.settings;
	const registry: Obj = { global: () => ({ get: (id: string) => (id === "Main" ? { session } : undefined) }) };
	const ai: Obj = {
		toolWireSchema: () => ({ type: "object", properties: {} }),
		// Like the host's: a required field left out throws.
		validateToolArguments: (t: { parameters?: { required?: string[] } }, call: { arguments: Obj }) => {
			const gone = (t.parameters?.required ?? []).find(k => !(k in call.arguments));
			if (gone !== undefined) throw new Error(`${gone}: required`);
			return call.arguments;
		},
		registerCustomApi() {},
		unregisterCustomApis() {},
		createAssistantMessageEventStream() {},
	};
	return { registry, ai, session, tools };
}
export type Fake = ReturnType<typeof fakeHost>;
