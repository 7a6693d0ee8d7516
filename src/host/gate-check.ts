/**
 * Whether a listed tool is behind omp's approval gate (host fact `approval-gate`). The shape: the
 * gate's class (`ExtensionToolWrapper`, minified in the bundle) holds the tool and Main's own runner,
 * and runs calls through its prototype's `execute`. The behaviour: that class, built around a harmless
 * canary whose settings say prompt, must ask once and never run it. Tried first with no context (omp
 * 18.2.1 on takes Main's settings from the runner); omp before that judged such a call by yolo, so
 * there the bridge passes Main's settings as the call's context, once that trial shows the gate asks.
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
	/** The gate asks only when the call's context carries the settings (omp before 18.2.1). */
	withSettings: boolean;
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

/** The gate class of `tool`, or why it is not the gate's shape around Main's runner. */
function gateClass(tool: unknown, main: unknown): { cls: GateClass } | { why: string } {
	const inner = member(tool, "tool");
	if (!isObj(inner) || !isFn(member(inner, "execute"))) return { why: "holds no gated tool" };
	const runner = member(main, "extensionRunner");
	if (!isObj(runner) || member(tool, "runner") !== runner) return { why: "does not hold Main's extension runner" };
	// The gate's execute lives on its class; an own one on the instance would run around it.
	if (!isObj(tool) || Object.hasOwn(tool, "execute")) return { why: "has its own execute beside the gate's" };
	const cls = member(tool, "constructor");
	if (!isFn(cls) || cls === Object || !isFn(member(member(cls, "prototype"), "execute")))
		return { why: "is not an instance of a gate class" };
	return { cls: cls as unknown as GateClass };
}

/** The context a call through a gate that passed takes, or why it cannot judge by Main's settings. */
function contextFor(v: Verdict, main: unknown): { context: unknown } | { why: string } {
	const settings = member(main, "settings");
	if (v.withSettings) {
		return isFn(member(settings, "get"))
			? { context: { settings } }
			: { why: "session.settings.get is not a function" };
	}
	// A call with no context is judged by the runner's settings: they must be the ones `/a2a` describes.
	return member(member(main, "extensionRunner"), "sessionSettings") === settings
		? { context: undefined }
		: { why: "is judged by other settings than Main's (extensionRunner.sessionSettings is not session.settings)" };
}

/** Sync part for the probe: the shape, and the trial's verdict once it has one (the trial starts here). */
export function gateShapeWhy(tool: unknown, main: unknown, onVerdict?: (v: Verdict) => void): string {
	const found = gateClass(tool, main);
	if ("why" in found) return `${found.why} (not behind the approval gate)`;
	const known = verdicts.get(found.cls);
	// The first sight of a class starts its trial; only that one reports the verdict.
	if (known === undefined && !trials.has(found.cls)) void trialOf(found.cls).then(v => onVerdict?.(v));
	if (known === undefined) return "";
	if (!known.ok) return known.why;
	const use = contextFor(known, main);
	return "why" in use ? use.why : "";
}

/**
 * Per call: the context to call `tool` with when it is the gate's shape around Main's runner and its class
 * passed the trial (undefined: none, the gate takes Main's settings itself); null when it is not.
 */
export async function gateFor(tool: unknown, main: unknown): Promise<{ context: unknown } | null> {
	const found = gateClass(tool, main);
	if ("why" in found) return null;
	const v = await trialOf(found.cls);
	if (!v.ok) return null;
	const use = contextFor(v, main);
	return "why" in use ? null : use;
}

/** Awaits the trial of every gate class among `tools` (at start, so the first probe has their verdicts). */
export async function tryGates(tools: readonly unknown[], main: unknown): Promise<void> {
	const classes = new Set<GateClass>();
	for (const t of tools) {
		const found = gateClass(t, main);
		if (!("why" in found)) classes.add(found.cls);
	}
	await Promise.all([...classes].map(trialOf));
}

function trialOf(cls: GateClass): Promise<Verdict> {
	let t = trials.get(cls);
	if (t === undefined) {
		t = judge(cls).then(v => {
			verdicts.set(cls, v);
			return v;
		});
		trials.set(cls, t);
	}
	return t;
}

/** No context first; a gate that ran the canary unasked is tried again with the settings as the context. */
async function judge(cls: GateClass): Promise<Verdict> {
	const bare = await trial(cls, false);
	if (bare.ok || bare.why !== RAN_UNASKED) return bare;
	const given = await trial(cls, true);
	return given.ok ? given : bare;
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

/** One trial call of the canary through `cls`, with no context or with the trial's settings as the context. */
async function trial(cls: GateClass, withSettings: boolean): Promise<Verdict> {
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
	const verdict = (ok: boolean, why: string): Verdict => ({ ok, why, withSettings });
	try {
		const gate = new cls(
			canary,
			trialRunner(() => asked++),
		);
		const context = withSettings ? { settings: TRIAL_SETTINGS } : undefined;
		const call = gate.execute("a2a-gate-trial", {}, undefined, undefined, context);
		const end = await Promise.race([
			call.then(
				() => ({ end: "ran" }),
				err => ({ end: "refused", err }),
			),
			bound,
		]);
		if (ran || end.end === "ran") return verdict(false, RAN_UNASKED);
		if (end.end === "timeout")
			return verdict(false, `the approval gate gave a trial call no answer in ${TRIAL_MS / 1000} s`);
		if (asked === 1) return verdict(true, "");
		const err = "err" in end ? messageOf(end.err) : "";
		return verdict(false, `the approval gate refused a trial call without asking (${err})`);
	} catch (err) {
		return verdict(false, `the approval gate could not be tried (${messageOf(err)})`);
	} finally {
		clearTimeout(timer);
	}
}

/** The gate ran the canary although its settings said to ask, with no context and with them as the context. */
const RAN_UNASKED = "the approval gate ran a trial call its settings say to ask about, without asking";
