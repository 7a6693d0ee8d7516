/**
 * The probe of the host facts (facts.ts): each present and of the shape the bridge calls, or named with
 * what is missing. Pure over the objects it is given (the agent registry and the `@oh-my-pi/pi-ai` root).
 */
import { isAbsolute } from "node:path";
import { FACTS, type FactCheck, type FactId, keepFacts, keptFacts } from "./facts.ts";

/** What the probe is given: the package roots' exports as the running host has them. */
export interface FactHost {
	/** `AgentRegistry` of `@oh-my-pi/pi-coding-agent`. */
	registry: unknown;
	/** The `@oh-my-pi/pi-ai` root namespace. */
	ai: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => (typeof v === "object" || typeof v === "function") && v !== null;
const isFn = (v: unknown): v is (...a: unknown[]) => unknown => typeof v === "function";

/** The first of `names` that is not a function on `o` (spelled `label.name`), else "". */
function missingFns(o: unknown, label: string, names: readonly string[]): string {
	if (!isObj(o)) return `${label} is missing`;
	const gone = names.find(n => !isFn(o[n]));
	return gone === undefined ? "" : `${label}.${gone} is not a function`;
}

/** Calls `f`; a throw becomes its message prefixed with `what`. */
function attempt<T>(what: string, f: () => T): { value: T } | { why: string } {
	try {
		return { value: f() };
	} catch (err) {
		return { why: `${what} threw (${err instanceof Error ? err.message : String(err)})` };
	}
}

interface Seen {
	main: Obj | null;
	mainWhy: string;
	tools: Array<[string, Obj]>;
	toolsWhy: string;
}

function look(registry: unknown): Seen {
	const seen: Seen = { main: null, mainWhy: "", tools: [], toolsWhy: "" };
	const global = isObj(registry) ? registry.global : undefined;
	const reg = isFn(global) ? attempt("AgentRegistry.global()", () => global.call(registry)) : null;
	if (reg === null) seen.mainWhy = "AgentRegistry.global is not a function";
	else if ("why" in reg) seen.mainWhy = reg.why;
	else if (!isObj(reg.value) || !isFn(reg.value.get)) seen.mainWhy = "AgentRegistry.global().get is not a function";
	else {
		const ref = attempt('get("Main")', () => (reg.value as { get(id: string): unknown }).get("Main"));
		const session = "value" in ref && isObj(ref.value) ? ref.value.session : undefined;
		if ("why" in ref) seen.mainWhy = ref.why;
		else if (!isObj(session)) seen.mainWhy = 'AgentRegistry.global().get("Main") has no session';
		else seen.main = session;
	}
	if (seen.main === null) return { ...seen, toolsWhy: "no Main session to look in" };
	seen.toolsWhy = missingFns(seen.main, "session", ["getAllToolNames", "getToolByName"]);
	if (seen.toolsWhy !== "") return seen;
	const main = seen.main as { getAllToolNames(): unknown; getToolByName(n: string): unknown };
	const listed = attempt("session.getAllToolNames()", () => main.getAllToolNames());
	if ("why" in listed || !Array.isArray(listed.value)) {
		return { ...seen, toolsWhy: "why" in listed ? listed.why : "session.getAllToolNames() gave no list" };
	}
	for (const name of listed.value) {
		const tool = typeof name === "string" ? attempt("getToolByName", () => main.getToolByName(name)) : null;
		if (tool !== null && "value" in tool && isObj(tool.value)) seen.tools.push([name as string, tool.value]);
	}
	if (listed.value.length > 0 && seen.tools.length === 0)
		seen.toolsWhy = "getToolByName found none of the listed tools";
	return seen;
}

/** The first listed tool of `names` present, checked by `ok`; holds when none of them is listed. */
function sampleTools(seen: Seen, names: readonly string[], ok: (t: Obj) => boolean, what: string): string {
	const found = seen.tools.filter(([n]) => names.includes(n));
	const bad = found.find(([, t]) => !ok(t));
	return bad === undefined ? "" : `tool '${bad[0]}' ${what}`;
}

function providerLayer(ai: Obj, main: Obj | null): string {
	const fromAi = missingFns(ai, "pi-ai", [
		"registerCustomApi",
		"unregisterCustomApis",
		"createAssistantMessageEventStream",
	]);
	if (fromAi !== "" || main === null) return fromAi || "no Main session to look in";
	const registry = main.modelRegistry;
	const why =
		missingFns(registry, "modelRegistry", ["getAll", "registerProvider", "unregisterProvider"]) ||
		missingFns(registry, "modelRegistry", ["awaitInitialBackgroundRefresh"]) ||
		missingFns(main.agent, "session.agent", ["setModel"]) ||
		missingFns(main.settings, "session.settings", ["get", "override", "clearOverride"]);
	if (why !== "") return why;
	const auth = (registry as Obj).authStorage;
	return authCheck(auth) === null ? "modelRegistry.authStorage has neither hasAuth nor keys.source" : "";
}

/**
 * Whether a provider has a credential, in the host's own words: `authStorage.hasAuth` up to 18.2, its
 * `keys.source(provider) !== undefined` from 18.3 (docs/host-facts.md); null when neither is there.
 */
export function authCheck(auth: unknown): ((provider: string) => boolean) | null {
	if (!isObj(auth)) return null;
	if (isFn(auth.hasAuth)) return p => (auth.hasAuth as (p: string) => boolean).call(auth, p) === true;
	const keys = auth.keys;
	if (isObj(keys) && isFn(keys.source)) return p => (keys.source as (p: string) => unknown).call(keys, p) !== undefined;
	return null;
}

/** Which facts hold in this host; one entry per fact, in the table's order. @internal */
export function probeHostFacts(host: FactHost): FactCheck[] {
	return probe(host).checks;
}

/** Probes, keeps the result for the process (with the Main it saw), says each missing fact once. @internal */
export function checkHost(host: FactHost, log: (line: string) => void): FactCheck[] {
	return keepFacts(probe(host), log);
}

/** The kept probe while `main` is the session it looked at; a new probe (said on `log`) once Main is another. */
export function factsFor(host: FactHost, main: unknown, log: (line: string) => void): readonly FactCheck[] {
	const kept = keptFacts();
	return kept !== null && kept.main === main ? kept.checks : checkHost(host, log);
}

function probe(host: FactHost): { main: Obj | null; checks: FactCheck[] } {
	const seen = look(host.registry);
	const tools = seen.toolsWhy || seen.mainWhy;
	const main = seen.main;
	const ui = main === null ? { why: seen.mainWhy } : attempt("extensionRunner.getUIContext()", () => uiOf(main));
	const whys: Record<FactId, string> = {
		"main-session": seen.mainWhy,
		"main-cwd": main === null ? seen.mainWhy : cwdWhy(main),
		"tool-registry": tools,
		"tool-execute":
			tools ||
			sampleTools(
				seen,
				seen.tools.map(([n]) => n),
				t => isFn(t.execute),
				"has no execute function",
			),
		"approval-gate":
			tools ||
			sampleTools(
				seen,
				seen.tools.map(([n]) => n),
				t => isBehindGate(t, main),
				"is not behind the approval gate (no wrapper holding Main's extension runner)",
			),
		"validate-args": missingFns(host.ai, "pi-ai", ["validateToolArguments"]),
		"wire-schema": missingFns(host.ai, "pi-ai", ["toolWireSchema"]) || wireSchemaWhy(host.ai, seen),
		"prompt-ui": "why" in ui ? ui.why : ui.value,
		"approval-details": sampleTools(
			seen,
			["bash", "write", "edit"],
			t => isFn(t.formatApprovalDetails),
			"has no formatApprovalDetails",
		),
		"lenient-args": sampleTools(
			seen,
			["todo", "task"],
			t => t.lenientArgValidation === true,
			"is not lenientArgValidation",
		),
		"async-jobs":
			seen.main === null
				? seen.mainWhy
				: missingFns(seen.main.asyncJobManager, "session.asyncJobManager", [
						"acknowledgeDeliveries",
						"consumeJobResults",
						"getJob",
						"cancel",
					]),
		"provider-layer": providerLayer(host.ai, seen.main),
	};
	const checks = (Object.keys(FACTS) as FactId[]).map(fact => ({
		fact,
		ok: whys[fact] === "",
		why: whys[fact],
		turnsOff: FACTS[fact].turnsOff,
	}));
	return { main, checks };
}

/**
 * Whether `tool` is omp's approval gate around a tool (`ExtensionToolWrapper`, whose class name the
 * bundle minifies): it holds the tool it gates and Main's own extension runner, which asks the user.
 */
export function isBehindGate(tool: unknown, main: unknown): boolean {
	if (!isObj(tool) || !isObj(main) || !isObj(tool.tool)) return false;
	return isObj(tool.runner) && tool.runner === main.extensionRunner && isFn(tool.tool.execute);
}

/** "" when Main's session manager gives an absolute working directory (relative `/blob` paths resolve there). */
function cwdWhy(main: Obj): string {
	const why = missingFns(main.sessionManager, "session.sessionManager", ["getCwd"]);
	if (why !== "") return why;
	const cwd = attempt("sessionManager.getCwd()", () => (main.sessionManager as { getCwd(): unknown }).getCwd());
	if ("why" in cwd) return cwd.why;
	return typeof cwd.value === "string" && isAbsolute(cwd.value) ? "" : "sessionManager.getCwd() gave no absolute path";
}

/**
 * "" when the runner's UI context has a `select` and is one object: the bridge lends a call's signal and
 * title to that object, and omp's gate must ask through the same one (prompt-signal.ts).
 */
function uiOf(main: Obj): string {
	const runner = main.extensionRunner;
	const why = missingFns(runner, "session.extensionRunner", ["getUIContext"]);
	if (why !== "") return why;
	const ui = (runner as { getUIContext(): unknown }).getUIContext();
	const noSelect = missingFns(ui, "extensionRunner.getUIContext()", ["select"]);
	if (noSelect !== "") return noSelect;
	const again = (runner as { getUIContext(): unknown }).getUIContext();
	return again === ui ? "" : "extensionRunner.getUIContext() gives another object each call";
}

/** The host's converter must turn a listed tool (`read` when there) into an object schema. */
function wireSchemaWhy(ai: Obj, seen: Seen): string {
	const sample = seen.tools.find(([n]) => n === "read") ?? seen.tools[0];
	if (sample === undefined) return "";
	const [name, tool] = sample;
	const out = attempt(`toolWireSchema(${name})`, () =>
		(ai.toolWireSchema as (t: unknown) => unknown)({
			name,
			description: tool.description,
			parameters: tool.parameters,
		}),
	);
	if ("why" in out) return out.why;
	return isObj(out.value) && out.value.type === "object" ? "" : `toolWireSchema(${name}) gave no object schema`;
}
