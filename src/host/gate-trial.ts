/**
 * The trial of an approval gate class (gate-check.ts): built around a canary that carries a listed tool's
 * name and never does anything, it is called three times under settings of the trial's own — `always-ask`
 * alone, `yolo` with the name's policy `prompt`, `yolo` with it `deny` — and must ask, ask, and refuse
 * without asking, never running the canary. Each reading of the settings the bridge describes is tried.
 */

type GateClass = new (tool: unknown, runner: unknown) => { execute(...a: unknown[]): Promise<unknown> };

/** A gate that neither asks nor refuses in this long fails the trial. */
const TRIAL_MS = 2_000;

/** A gate that passed, and whether it asks only when the call's context carries the settings (omp before 18.2.1). */
export type Verdict = { ok: true; withSettings: boolean } | { ok: false; why: string };

interface Case {
	what: string;
	settings: Record<string, unknown>;
	/** asked: one dialog, answered Deny; refused: no dialog, an error. Never run. */
	expect: "asked" | "refused";
}

const casesFor = (name: string): Case[] => [
	{ what: "always-ask", settings: { "tools.approvalMode": "always-ask" }, expect: "asked" },
	{
		what: `yolo with tools.approval.${name}: prompt`,
		settings: { "tools.approvalMode": "yolo", "tools.approval": { [name]: "prompt" } },
		expect: "asked",
	},
	{
		what: `yolo with tools.approval.${name}: deny`,
		settings: { "tools.approvalMode": "yolo", "tools.approval": { [name]: "deny" } },
		expect: "refused",
	},
];

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The gate ran the canary although its settings said to ask or refuse. */
const RAN_UNASKED = "the approval gate ran a trial call its settings say to ask about or refuse";

/** A runner in the members omp's gate uses: it records each dialog and answers Deny. */
function trialRunner(settings: { get(key: string): unknown }, onAsk: () => void) {
	const ui = {
		select: async () => {
			onAsk();
			return "Deny";
		},
	};
	return {
		sessionSettings: settings,
		sessionId: "a2a-bridge-gate-trial",
		getUIContext: () => ui,
		hasUI: () => true,
		hasHandlers: () => false,
		consumeToolCallEmitted: () => false,
		runScoped: <T>(fn: () => T): T => fn(),
		emit: async () => {},
		waitForToolApprovalPreview: async () => {},
	};
}

/** One trial call through `cls`, with no context or with the case's settings as the context; "" when as expected. */
async function once(cls: GateClass, name: string, c: Case, withSettings: boolean): Promise<string> {
	let asked = 0;
	let ran = false;
	const canary = {
		name,
		label: name,
		description: "approval gate trial (never runs)",
		parameters: { type: "object", properties: {} },
		execute: async () => {
			ran = true;
			return { content: [] };
		},
	};
	const settings = { get: (key: string): unknown => c.settings[key] };
	let timer: ReturnType<typeof setTimeout> | undefined;
	const bound = new Promise<{ end: "timeout" }>(resolve => {
		timer = setTimeout(() => resolve({ end: "timeout" }), TRIAL_MS);
	});
	try {
		const gate = new cls(
			canary,
			trialRunner(settings, () => asked++),
		);
		const call = gate.execute(
			`a2a-gate-trial-${name}`,
			{},
			undefined,
			undefined,
			withSettings ? { settings } : undefined,
		);
		const end = await Promise.race([
			call.then(
				() => ({ end: "ran" }),
				err => ({ end: "refused", err }),
			),
			bound,
		]);
		if (ran || end.end === "ran") return RAN_UNASKED;
		if (end.end === "timeout") return `the approval gate gave a trial call no answer in ${TRIAL_MS / 1000} s`;
		const want = c.expect === "asked" ? 1 : 0;
		if (asked === want) return "";
		const err = "err" in end ? messageOf(end.err) : "";
		return `the approval gate ${asked === 0 ? "refused without asking" : "asked"} under ${c.what} (${err})`;
	} catch (err) {
		return `the approval gate could not be tried (${messageOf(err)})`;
	} finally {
		clearTimeout(timer);
	}
}

/** Every case with no context; a gate that ran the canary is tried again with the settings as the context. */
export async function judge(cls: GateClass, name: string): Promise<Verdict> {
	const run = async (withSettings: boolean): Promise<Verdict> => {
		for (const c of casesFor(name)) {
			const why = await once(cls, name, c, withSettings);
			if (why !== "") return { ok: false, why };
		}
		return { ok: true, withSettings };
	};
	const bare = await run(false);
	if (bare.ok || bare.why !== RAN_UNASKED) return bare;
	// omp before 18.2.1 judges a call with no context by yolo: the settings must come with the call.
	const given = await run(true);
	return given.ok ? given : bare;
}
