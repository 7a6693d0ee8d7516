/**
 * The probe of the host facts (facts.ts): each present and of the shape the bridge calls, or named with
 * what is missing. Pure over the objects it is given (the agent registry and the `@oh-my-pi/pi-ai` root).
 */
import { FACTS, type FactCheck, type FactId, keepFacts, keptFacts } from "./facts.ts";
import {
	attempt,
	cwdWhy,
	eventsWhy,
	missingFns,
	providerLayer,
	sessionIdWhy,
	uiWhy,
	validateWhy,
	wireSchemaWhy,
} from "./facts-checks.ts";
import { gateChanges, gateShapeWhy, isFn, isObj, member, onGateChange } from "./gate-check.ts";

export { authCheck } from "./facts-checks.ts";

/** What the probe is given: the package roots' exports as the running host has them. */
export interface FactHost {
	/** `AgentRegistry` of `@oh-my-pi/pi-coding-agent`. */
	registry: unknown;
	/** The `@oh-my-pi/pi-ai` root namespace. */
	ai: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

interface Seen {
	main: Obj | null;
	mainWhy: string;
	tools: Array<[string, Obj]>;
	toolsWhy: string;
}

/** Main and its listed tools; a getter that throws anywhere reads as the piece missing. */
function look(registry: unknown): Seen {
	const seen: Seen = { main: null, mainWhy: "", tools: [], toolsWhy: "" };
	const found = attempt("reading Main from AgentRegistry", () => mainIn(registry));
	if ("why" in found) seen.mainWhy = found.why;
	else if (typeof found.value === "string") seen.mainWhy = found.value;
	else seen.main = found.value;
	if (seen.main === null) return { ...seen, toolsWhy: "no Main session to look in" };
	const main = seen.main;
	seen.toolsWhy = missingFns(main, "session", ["getAllToolNames", "getToolByName"]);
	if (seen.toolsWhy !== "") return seen;
	const listed = attempt("session.getAllToolNames()", () => (main.getAllToolNames as () => unknown)());
	if ("why" in listed || !Array.isArray(listed.value)) {
		return { ...seen, toolsWhy: "why" in listed ? listed.why : "session.getAllToolNames() gave no list" };
	}
	for (const name of listed.value) {
		const tool =
			typeof name === "string"
				? attempt("getToolByName", () => (main.getToolByName as (n: string) => unknown)(name))
				: null;
		if (tool !== null && "value" in tool && isObj(tool.value)) seen.tools.push([name as string, tool.value]);
	}
	if (listed.value.length > 0 && seen.tools.length === 0)
		seen.toolsWhy = "getToolByName found none of the listed tools";
	return seen;
}

/** Main's session in the registry, or why not; its session manager must name it (the entry's binding test). */
function mainIn(registry: unknown): Obj | string {
	const global = member(registry, "global");
	if (!isFn(global)) return "AgentRegistry.global is not a function";
	const reg = global.call(registry);
	const get = member(reg, "get");
	if (!isFn(get)) return "AgentRegistry.global().get is not a function";
	const session = member(get.call(reg, "Main"), "session");
	if (!isObj(session)) return 'AgentRegistry.global().get("Main") has no session';
	return sessionIdWhy(session) || session;
}

/** The first listed tool of `names` present, checked by `why` ("" holds); holds when none of them is listed. */
function sampleTools(seen: Seen, names: readonly string[], why: (t: Obj) => string): string {
	for (const [name, tool] of seen.tools) {
		if (!names.includes(name)) continue;
		const found = attempt(`tool '${name}'`, () => why(tool));
		const said = "why" in found ? found.why : found.value;
		if (said !== "") return "why" in found ? said : `tool '${name}' ${said}`;
	}
	return "";
}

/** Which facts hold in this host; one entry per fact, in the table's order. @internal */
export function probeHostFacts(host: FactHost): FactCheck[] {
	return probe(host).checks;
}

/**
 * Probes, keeps the result for the process (with the Main it saw), says each missing fact once. A gate
 * found not to hold later (a trial ending, a refused call) makes a new probe, said the same way. @internal
 */
export function checkHost(host: FactHost, log: (line: string) => void): FactCheck[] {
	onGateChange(() => checkHost(host, log));
	const epoch = gateChanges();
	return keepFacts({ ...probe(host), epoch }, log);
}

/**
 * The kept probe while `main` is the session it looked at and no gate changed since; a new probe (said on
 * `log`) otherwise. No Main (parked, between sessions) is a state, not a moved host: the kept probe stands.
 */
export function factsFor(host: FactHost, main: unknown, log: (line: string) => void): readonly FactCheck[] {
	const kept = keptFacts();
	if (kept !== null && (main === null || (kept.main === main && kept.epoch === gateChanges()))) return kept.checks;
	return checkHost(host, log);
}

const NO_ASK = "has no execute function";

function probe(host: FactHost): { main: Obj | null; checks: FactCheck[] } {
	const seen = look(host.registry);
	const tools = seen.toolsWhy || seen.mainWhy;
	const main = seen.main;
	const all = seen.tools.map(([n]) => n);
	const onMain = (f: (m: Obj) => string) => (main === null ? () => seen.mainWhy : () => f(main));
	const checks: Record<FactId, () => string> = {
		"main-session": () => seen.mainWhy,
		"main-cwd": onMain(cwdWhy),
		"tool-registry": () => tools,
		"tool-execute": () => tools || sampleTools(seen, all, t => (isFn(member(t, "execute")) ? "" : NO_ASK)),
		"approval-gate": () => tools || sampleTools(seen, all, t => gateShapeWhy(t, main)),
		"validate-args": () => validateWhy(host.ai),
		"wire-schema": () => wireSchemaWhy(host.ai, seen.tools.find(([n]) => n === "read") ?? seen.tools[0]),
		"prompt-ui": onMain(uiWhy),
		"call-events": onMain(eventsWhy),
		"approval-details": () =>
			sampleTools(seen, ["bash", "write", "edit"], t =>
				isFn(member(t, "formatApprovalDetails")) ? "" : "has no formatApprovalDetails",
			),
		"lenient-args": () =>
			sampleTools(seen, ["todo", "task"], t =>
				member(t, "lenientArgValidation") === true ? "" : "is not lenientArgValidation",
			),
		"async-jobs": onMain(m =>
			missingFns(member(m, "asyncJobManager"), "session.asyncJobManager", [
				"acknowledgeDeliveries",
				"consumeJobResults",
				"getJob",
				"cancel",
			]),
		),
		"provider-layer": () => providerLayer(host.ai, main),
	};
	const list = (Object.keys(FACTS) as FactId[]).map(fact => {
		const found = attempt(`checking '${fact}'`, checks[fact]);
		const why = "why" in found ? found.why : found.value;
		return { fact, ok: why === "", why, turnsOff: FACTS[fact].turnsOff };
	});
	return { main, checks: list };
}
