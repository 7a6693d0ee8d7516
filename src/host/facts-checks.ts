/**
 * The checks of single host facts (facts.ts) over the objects the probe found (facts-probe.ts): each
 * returns "" when its fact holds, else the first piece missing. Members are read through `member`, so
 * a getter that throws reads as missing; the probe also guards each check as a whole.
 */
import { isAbsolute } from "node:path";
import { isFn, isObj, member } from "./gate-check.ts";

type Obj = Record<string, unknown>;

/** The first of `names` that is not a function on `o` (spelled `label.name`), else "". */
export function missingFns(o: unknown, label: string, names: readonly string[]): string {
	if (!isObj(o)) return `${label} is missing`;
	const gone = names.find(n => !isFn(member(o, n)));
	return gone === undefined ? "" : `${label}.${gone} is not a function`;
}

/** Calls `f`; a throw becomes its message prefixed with `what`. */
export function attempt<T>(what: string, f: () => T): { value: T } | { why: string } {
	try {
		return { value: f() };
	} catch (err) {
		return { why: `${what} threw (${err instanceof Error ? err.message : String(err)})` };
	}
}

/** "" when Main's session manager gives an absolute working directory (relative `/blob` paths resolve there). */
export function cwdWhy(main: Obj): string {
	const manager = member(main, "sessionManager");
	const why = missingFns(manager, "session.sessionManager", ["getCwd"]);
	if (why !== "") return why;
	const cwd = attempt("sessionManager.getCwd()", () => (manager as { getCwd(): unknown }).getCwd());
	if ("why" in cwd) return cwd.why;
	return typeof cwd.value === "string" && isAbsolute(cwd.value) ? "" : "sessionManager.getCwd() gave no absolute path";
}

/**
 * "" when the runner's UI context has a `select` and is one object: the bridge lends a call's signal and
 * title to that object, and omp's gate must ask through the same one (prompt-signal.ts).
 */
export function uiWhy(main: Obj): string {
	const runner = member(main, "extensionRunner");
	const why = missingFns(runner, "session.extensionRunner", ["getUIContext"]);
	if (why !== "") return why;
	const ui = (runner as { getUIContext(): unknown }).getUIContext();
	const noSelect = missingFns(ui, "extensionRunner.getUIContext()", ["select"]);
	if (noSelect !== "") return noSelect;
	const again = (runner as { getUIContext(): unknown }).getUIContext();
	return again === ui ? "" : "extensionRunner.getUIContext() gives another object each call";
}

/** The host's converter must turn a listed tool (`read` when there) into an object schema. */
export function wireSchemaWhy(ai: Obj, sample: [string, Obj] | undefined): string {
	const gone = missingFns(ai, "pi-ai", ["toolWireSchema"]);
	if (gone !== "" || sample === undefined) return gone;
	const [name, tool] = sample;
	const out = attempt(`toolWireSchema(${name})`, () =>
		(ai.toolWireSchema as (t: unknown) => unknown)({
			name,
			description: member(tool, "description"),
			parameters: member(tool, "parameters"),
		}),
	);
	if ("why" in out) return out.why;
	return isObj(out.value) && out.value.type === "object" ? "" : `toolWireSchema(${name}) gave no object schema`;
}

/** A tool of one required string argument: the host's validator must throw when it is left out. */
const VALIDATE_SAMPLE = {
	name: "a2a_bridge_validate_trial",
	description: "",
	parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** "" when the host's validator throws on arguments its tool's schema refuses (the bridge runs what it returns). */
export function validateWhy(ai: Obj): string {
	const gone = missingFns(ai, "pi-ai", ["validateToolArguments"]);
	if (gone !== "") return gone;
	const call = { type: "toolCall", id: "a2a-bridge-validate-trial", name: VALIDATE_SAMPLE.name, arguments: {} };
	try {
		(ai.validateToolArguments as (t: unknown, c: unknown) => unknown)(VALIDATE_SAMPLE, call);
	} catch {
		return "";
	}
	return "validateToolArguments returned for arguments missing a required field (the bridge needs it to throw)";
}

/** "" when Main's agent takes the bridge's external events (each remote call shown in the host's session). */
export function eventsWhy(main: Obj): string {
	return missingFns(member(main, "agent"), "session.agent", ["emitExternalEvent"]);
}

/** "" when Main's session manager names its session (how the entry tells Main's binding from a subagent's). */
export function sessionIdWhy(main: Obj): string {
	return missingFns(member(main, "sessionManager"), "session.sessionManager", ["getSessionId"]);
}

export function providerLayer(ai: Obj, main: Obj | null): string {
	const fromAi = missingFns(ai, "pi-ai", [
		"registerCustomApi",
		"unregisterCustomApis",
		"createAssistantMessageEventStream",
	]);
	if (fromAi !== "" || main === null) return fromAi || "no Main session to look in";
	const registry = member(main, "modelRegistry");
	const why =
		missingFns(registry, "modelRegistry", ["getAll", "registerProvider", "unregisterProvider"]) ||
		missingFns(registry, "modelRegistry", ["awaitInitialBackgroundRefresh"]) ||
		missingFns(member(main, "agent"), "session.agent", ["setModel"]) ||
		missingFns(member(main, "settings"), "session.settings", ["get", "override", "clearOverride"]);
	if (why !== "") return why;
	return authCheck(member(registry, "authStorage")) === null
		? "modelRegistry.authStorage has neither hasAuth nor keys.source"
		: "";
}

/**
 * Whether a provider has a credential, in the host's own words: `authStorage.hasAuth` up to 18.2, its
 * `keys.source(provider) !== undefined` from 18.3 (docs/host-facts.md); null when neither is there.
 */
export function authCheck(auth: unknown): ((provider: string) => boolean) | null {
	if (!isObj(auth)) return null;
	const hasAuth = member(auth, "hasAuth");
	if (isFn(hasAuth)) return p => hasAuth.call(auth, p) === true;
	const keys = member(auth, "keys");
	const source = member(keys, "source");
	if (isFn(source)) return p => source.call(keys, p) !== undefined;
	return null;
}
