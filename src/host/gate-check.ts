/**
 * Whether a listed tool is behind omp's approval gate (host fact `approval-gate`). The shape: the
 * gate's class (`ExtensionToolWrapper`, minified in the bundle) holds the tool and Main's own runner,
 * and runs calls through its class's own `execute`. The behaviour: that class is tried per tool name
 * (gate-trial.ts). Where it asks only when a call's context carries the settings (omp before 18.2.1),
 * the bridge passes Main's settings as the context; elsewhere none, and the runner must hold Main's.
 */
import { judge, type Verdict } from "./gate-trial.ts";

type Obj = Record<string, unknown>;
/** A host value members can be read from (objects and classes alike). */
export const isObj = (v: unknown): v is Obj => (typeof v === "object" || typeof v === "function") && v !== null;
export const isFn = (v: unknown): v is (...a: unknown[]) => unknown => typeof v === "function";
type GateClass = new (tool: unknown, runner: unknown) => { execute(...a: unknown[]): Promise<unknown> };

/** Per gate class and tool name: the trial, run once (classes and names are the host's, few). */
const trials = new WeakMap<object, Map<string, Promise<Verdict>>>();
const verdicts = new WeakMap<object, Map<string, Verdict>>();

/** Bumped whenever a gate is found not to hold after a probe; the probe is made again (facts-probe.ts). */
let changes = 0;
let onChange: (() => void) | null = null;
export const gateChanges = (): number => changes;
/** The one listener told of each change (the last probe's: it probes again and says what is new). */
export function onGateChange(listener: () => void): void {
	onChange = listener;
}
function changed(): void {
	changes++;
	onChange?.();
}

/** Reads `o[key]`; a throwing getter reads as undefined (a hostile or moved host never throws here). */
export function member(o: unknown, key: string): unknown {
	if (!isObj(o)) return undefined;
	try {
		return o[key];
	} catch {
		return undefined;
	}
}

interface Found {
	cls: GateClass;
	name: string;
	/** The class's own execute, read once: the one the bridge then calls (a later read could differ). */
	execute: (...a: unknown[]) => Promise<unknown>;
}

/** The gate class and tool name of `tool`, or why it is not the gate's shape around Main's runner. */
function gateClass(tool: unknown, main: unknown): Found | { why: string } {
	try {
		const inner = member(tool, "tool");
		const name = member(inner, "name");
		if (!isObj(inner) || !isFn(member(inner, "execute")) || typeof name !== "string")
			return { why: "holds no gated tool" };
		const runner = member(main, "extensionRunner");
		if (!isObj(runner) || member(tool, "runner") !== runner) return { why: "does not hold Main's extension runner" };
		const cls = member(tool, "constructor");
		const proto = member(cls, "prototype");
		// The execute called is the class's own, the one tried: no own or interposed one runs around it.
		if (!isFn(cls) || cls === Object || !isObj(tool) || Object.getPrototypeOf(tool) !== proto)
			return { why: "is not an instance of a gate class" };
		const execute = member(proto, "execute");
		if (Object.hasOwn(tool, "execute") || !isFn(execute) || member(tool, "execute") !== execute)
			return { why: "runs another execute than its gate class's" };
		return { cls: cls as unknown as GateClass, name, execute: execute as Found["execute"] };
	} catch (err) {
		return { why: `threw when read (${err instanceof Error ? err.message : String(err)})` };
	}
}

/** The context a call through a gate that passed takes, or why it cannot judge by Main's settings. */
function contextFor(v: Verdict & { ok: true }, main: unknown): { context: unknown } | { why: string } {
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
export function gateShapeWhy(tool: unknown, main: unknown): string {
	const found = gateClass(tool, main);
	if ("why" in found) return `${found.why} (not behind the approval gate)`;
	const known = verdicts.get(found.cls)?.get(found.name);
	if (known === undefined) {
		void trialOf(found);
		return "";
	}
	if (!known.ok) return known.why;
	const use = contextFor(known, main);
	return "why" in use ? use.why : "";
}

/**
 * Per call: the context to call `tool` with when it is the gate's shape around Main's runner and its class
 * passed the trial for its name (undefined: none, the gate takes Main's settings itself); null when not.
 */
export async function gateFor(tool: unknown, main: unknown): Promise<GateUse | null> {
	const found = gateClass(tool, main);
	if ("why" in found) return null;
	const v = await trialOf(found);
	const use = v.ok ? contextFor(v, main) : null;
	if (use === null || "why" in use) {
		changed();
		return null;
	}
	return { context: use.context, execute: found.execute };
}

/** How a call goes through a gate that passed: the context to pass, and the class's execute to call on the tool. */
export interface GateUse {
	context: unknown;
	execute: (...a: unknown[]) => Promise<unknown>;
}

/** Awaits the trial of every gate among `tools` (at start, so the first probe has their verdicts). */
export async function tryGates(tools: readonly unknown[], main: unknown): Promise<void> {
	const found = tools.map(t => gateClass(t, main)).filter((f): f is Found => !("why" in f));
	await Promise.all(found.map(trialOf));
}

function trialOf({ cls, name }: Found): Promise<Verdict> {
	let byName = trials.get(cls);
	if (byName === undefined) {
		byName = new Map();
		trials.set(cls, byName);
	}
	let t = byName.get(name);
	if (t === undefined) {
		t = judge(cls, name).then(v => {
			let known = verdicts.get(cls);
			if (known === undefined) {
				known = new Map();
				verdicts.set(cls, known);
			}
			known.set(name, v);
			if (!v.ok) changed();
			return v;
		});
		byName.set(name, t);
	}
	return t;
}
