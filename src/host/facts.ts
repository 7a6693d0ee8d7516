/**
 * The host facts the bridge relies on (docs/host-facts.md), probed once when the endpoint starts: each
 * present and of the expected shape, or named with what its absence turns off. Pure over the objects it
 * is given (the agent registry and the `@oh-my-pi/pi-ai` root); the entry logs and serves by the result.
 */

/** The omp versions every fact was seen to hold on (the test hosts); docs/guide/install.md says the same. @internal */
export const KNOWN_GOOD = "omp 18.1.16 and 18.2.3";

/** The facts, by the names stderr and `/a2a` use. @internal */
export type FactId =
	| "main-session"
	| "tool-registry"
	| "tool-execute"
	| "validate-args"
	| "wire-schema"
	| "prompt-ui"
	| "approval-details"
	| "lenient-args"
	| "async-jobs"
	| "provider-layer";

/** What a missing fact refuses outright; anything else it only degrades, and says so. */
export type Served = "tools/list" | "tools/call" | "takeover";

export interface FactCheck {
	fact: FactId;
	ok: boolean;
	/** Why it does not hold (the first piece found missing); "" when it holds. */
	why: string;
	turnsOff: string;
}

/** Per fact: what its absence turns off, and which served parts it refuses. @internal */
export const FACTS: Record<FactId, { turnsOff: string; refuses: readonly Served[] }> = {
	"main-session": {
		turnsOff: "tools/list and tools/call refused: the Main session is not where the registry kept it",
		refuses: ["tools/list", "tools/call"],
	},
	"tool-registry": {
		turnsOff: "tools/list and tools/call refused: the session's tool lookup moved",
		refuses: ["tools/list", "tools/call"],
	},
	"tool-execute": { turnsOff: "tools/call refused: the host's tools cannot be run", refuses: ["tools/call"] },
	"validate-args": {
		turnsOff: "tools/call refused: arguments could not be checked against the tool's schema",
		refuses: ["tools/call"],
	},
	"wire-schema": {
		turnsOff: 'tools listed with the bare schema {"type":"object"}; the approval picture cannot name prompting actions',
		refuses: [],
	},
	"prompt-ui": {
		turnsOff: "remote approval prompts keep the host's title, do not take turns, and stay open after a cancel",
		refuses: [],
	},
	"approval-details": {
		turnsOff: "remote approval prompts show the arguments without the tool's own detail lines",
		refuses: [],
	},
	"lenient-args": {
		turnsOff: "tools that take loose arguments (todo, task) are held to their schema",
		refuses: [],
	},
	"async-jobs": {
		turnsOff: "a bash call the host moves to the background answers with the host's job stub, not its output",
		refuses: [],
	},
	"provider-layer": { turnsOff: "takeover unavailable: the provider layer moved", refuses: ["takeover"] },
};

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
	const seen = look(host.registry);
	const tools = seen.toolsWhy || seen.mainWhy;
	const main = seen.main;
	const ui = main === null ? { why: seen.mainWhy } : attempt("extensionRunner.getUIContext()", () => uiOf(main));
	const whys: Record<FactId, string> = {
		"main-session": seen.mainWhy,
		"tool-registry": tools,
		"tool-execute":
			tools ||
			sampleTools(
				seen,
				seen.tools.map(([n]) => n),
				t => isFn(t.execute),
				"has no execute function",
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
	return (Object.keys(FACTS) as FactId[]).map(fact => ({
		fact,
		ok: whys[fact] === "",
		why: whys[fact],
		turnsOff: FACTS[fact].turnsOff,
	}));
}

/** "" when the runner's UI context has a `select`; else what is missing. */
function uiOf(main: Obj): string {
	const runner = main.extensionRunner;
	const why = missingFns(runner, "session.extensionRunner", ["getUIContext"]);
	if (why !== "") return why;
	const ui = (runner as { getUIContext(): unknown }).getUIContext();
	return missingFns(ui, "extensionRunner.getUIContext()", ["select"]);
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

/** The one line on host stderr per missing fact. */
function factLines(checks: readonly FactCheck[]): string[] {
	return checks
		.filter(c => !c.ok)
		.map(c => `a2a-bridge: host fact '${c.fact}' missing (${c.why}): ${c.turnsOff}; known to work: ${KNOWN_GOOD}`);
}

/** `/a2a status`'s lines: one when every fact holds, else one per missing fact. */
export function factStatus(checks: readonly FactCheck[]): string[] {
	const missing = checks.filter(c => !c.ok);
	if (missing.length === 0) return [`host facts: all ${checks.length} hold`];
	return missing.map(c => `host fact '${c.fact}' missing: ${c.turnsOff} (${c.why})`);
}

/** The sentence a refused method or route answers with, naming the fact; null when nothing refuses `what`. */
export function refusalFor(checks: readonly FactCheck[], what: Served): string | null {
	const c = checks.find(x => !x.ok && FACTS[x.fact].refuses.includes(what));
	if (c === undefined) return null;
	return `${what} unavailable: host fact '${c.fact}' missing (${c.why}); known to work: ${KNOWN_GOOD}`;
}

const STORE_KEY = Symbol.for("pi-a2a-ext.host-facts");

/** The process's last probe (the takeover reads it live); empty before the first start. */
export function processFacts(): readonly FactCheck[] {
	return ((globalThis as Record<symbol, unknown>)[STORE_KEY] as FactCheck[] | undefined) ?? [];
}

/** Probes, keeps the result for the process and says each missing fact once on `log`. */
export function checkHost(host: FactHost, log: (line: string) => void): FactCheck[] {
	const checks = probeHostFacts(host);
	(globalThis as Record<symbol, unknown>)[STORE_KEY] = checks;
	for (const line of factLines(checks)) log(line);
	return checks;
}
