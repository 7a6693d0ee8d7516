/**
 * Whether a listed tool is behind omp's approval gate (host fact `approval-gate`). The shape: the
 * gate's class (`ExtensionToolWrapper`, minified in the bundle) holds the tool and Main's own runner,
 * and runs calls through its prototype's `execute`. The behaviour: that class, built around a harmless
 * canary whose policy says prompt, asks once and never runs it for a call made the way the bridge makes
 * them (no context) — omp before 18.2.1 ran such a call in yolo whatever Main's settings said.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => (typeof v === "object" || typeof v === "function") && v !== null;
const isFn = (v: unknown): v is (...a: unknown[]) => unknown => typeof v === "function";
type GateClass = new (tool: unknown, runner: unknown) => { execute(...a: unknown[]): Promise<unknown> };

/** The canary's name: a tool no host lists, so its policy entry touches nothing real. */
const CANARY = "a2a_bridge_gate_trial";
/** A gate that neither asks nor refuses in this long fails the trial. */
const TRIAL_MS = 2_000;

export interface Verdict {
	ok: boolean;
	why: string;
}

/** Per gate class: its trial, run once (classes are few and never freed while the host runs). */
const trials = new WeakMap<object, Promise<Verdict>>();
const verdicts = new WeakMap<object, Verdict>();

/** Reads `o[key]`; a throwing getter reads as undefined (a hostile or moved host never throws here). */
export function member(o: unknown, key: string): unknown {
	if (!isObj(o)) return undefined;
	try {
		return o[key];
	} catch {
		return undefined;
	}
}

/** The gate class of `tool`, or "" with why it is not the gate's shape around Main's runner. */
function gateClass(tool: unknown, main: unknown): { cls: GateClass } | { why: string } {
	const inner = member(tool, "tool");
	if (!isObj(inner) || !isFn(member(inner, "execute"))) return { why: "holds no gated tool" };
	const runner = member(main, "extensionRunner");
	if (!isObj(runner) || member(tool, "runner") !== runner) return { why: "does not hold Main's extension runner" };
	// A call with no context is judged by the runner's settings: they must be the ones `/a2a` describes.
	if (member(runner, "sessionSettings") !== member(main, "settings"))
		return { why: "is judged by other settings than Main's (extensionRunner.sessionSettings is not session.settings)" };
	// The gate's execute lives on its class; an own one on the instance would run around it.
	if (!isObj(tool) || Object.hasOwn(tool, "execute")) return { why: "has its own execute beside the gate's" };
	const cls = member(tool, "constructor");
	if (!isFn(cls) || cls === Object || !isFn(member(member(cls, "prototype"), "execute")))
		return { why: "is not an instance of a gate class" };
	return { cls: cls as unknown as GateClass };
}

/** Sync part for the probe: the shape, and the trial's verdict once it has one (the trial starts here). */
export function gateShapeWhy(tool: unknown, main: unknown, onVerdict?: (v: Verdict) => void): string {
	const found = gateClass(tool, main);
	if ("why" in found) return `${found.why} (not behind the approval gate)`;
	const known = verdicts.get(found.cls);
	// The first sight of a class starts its trial; only that one reports the verdict.
	if (known === undefined && !trials.has(found.cls)) void trialOf(found.cls).then(v => onVerdict?.(v));
	return known === undefined || known.ok ? "" : known.why;
}

/** Per call: the tool is the gate's shape around Main's runner, and its class passed the trial. */
export async function isBehindGate(tool: unknown, main: unknown): Promise<boolean> {
	const found = gateClass(tool, main);
	return !("why" in found) && (await trialOf(found.cls)).ok;
}

function trialOf(cls: GateClass): Promise<Verdict> {
	let t = trials.get(cls);
	if (t === undefined) {
		t = trial(cls).then(v => {
			verdicts.set(cls, v);
			return v;
		});
		trials.set(cls, t);
	}
	return t;
}

/** Settings that make the canary prompt by both the mode and its own policy. */
const TRIAL_SETTINGS = {
	get: (key: string): unknown =>
		key === "tools.approvalMode" ? "always-ask" : key === "tools.approval" ? { [CANARY]: "prompt" } : undefined,
};

/** A runner in the members omp's gate uses: it records each dialog and answers Deny. */
function trialRunner(onAsk: () => void) {
	const ui = {
		select: async () => {
			onAsk();
			return "Deny";
		},
	};
	return {
		sessionSettings: TRIAL_SETTINGS,
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

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function trial(cls: GateClass): Promise<Verdict> {
	let asked = 0;
	let ran = false;
	const canary = {
		name: CANARY,
		label: CANARY,
		description: "approval gate trial (never runs)",
		parameters: { type: "object", properties: {} },
		execute: async () => {
			ran = true;
			return { content: [] };
		},
	};
	let timer: ReturnType<typeof setTimeout> | undefined;
	const bound = new Promise<{ end: "timeout" }>(resolve => {
		timer = setTimeout(() => resolve({ end: "timeout" }), TRIAL_MS);
	});
	try {
		const gate = new cls(
			canary,
			trialRunner(() => asked++),
		);
		const call = gate.execute("a2a-gate-trial", {}, undefined, undefined, undefined);
		const end = await Promise.race([
			call.then(
				() => ({ end: "ran" }),
				err => ({ end: "refused", err }),
			),
			bound,
		]);
		if (ran || end.end === "ran") return { ok: false, why: RAN_UNASKED };
		if (end.end === "timeout")
			return { ok: false, why: `the approval gate gave a trial call no answer in ${TRIAL_MS / 1000} s` };
		if (asked === 1) return { ok: true, why: "" };
		const err = "err" in end ? messageOf(end.err) : "";
		return { ok: false, why: `the approval gate refused a trial call without asking (${err})` };
	} catch (err) {
		return { ok: false, why: `the approval gate could not be tried (${messageOf(err)})` };
	} finally {
		clearTimeout(timer);
	}
}

/** omp before 18.2.1 judged a call with no context by yolo, whatever Main's approval settings said. */
const RAN_UNASKED =
	"the approval gate ran a trial call Main's settings say to ask about, without asking (omp before 18.2.1 applies them only to the agent's own calls)";
