/**
 * The host facts the bridge relies on (docs/architecture.md "Host facts"): the table of what each one's
 * absence turns off, how a missing one is said, and the process's last probe (facts-probe.ts makes it,
 * at start and again whenever Main is another session).
 */

/** The omp versions every fact was seen to hold on (the test hosts); docs/guide/install.md says the same. @internal */
export const KNOWN_GOOD = "omp 18.1.16 and 18.2.3";

/** The facts, by the names stderr and `/a2a` use. */
export type FactId =
	| "main-session"
	| "main-cwd"
	| "tool-registry"
	| "tool-execute"
	| "approval-gate"
	| "validate-args"
	| "wire-schema"
	| "prompt-ui"
	| "call-events"
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

/** Per fact: what its absence turns off, and which served parts it refuses. */
export const FACTS: Record<FactId, { turnsOff: string; refuses: readonly Served[] }> = {
	"main-session": {
		turnsOff:
			"tools/list and tools/call refused: the Main session is not where the registry kept it, or does not name itself",
		refuses: ["tools/list", "tools/call"],
	},
	"main-cwd": {
		turnsOff: "relative /blob paths refused (absolute and ~ paths still served): Main's working directory is unknown",
		refuses: [],
	},
	"tool-registry": {
		turnsOff: "tools/list and tools/call refused: the session's tool lookup moved",
		refuses: ["tools/list", "tools/call"],
	},
	"tool-execute": { turnsOff: "tools/call refused: the host's tools cannot be run", refuses: ["tools/call"] },
	"approval-gate": {
		turnsOff:
			"tools/call refused for every tool not behind an approval gate that asks as Main's settings say, so none runs unprompted",
		refuses: [],
	},
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
	"call-events": {
		turnsOff: "remote calls are not shown in the host's session as they run (they still run and are audited)",
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

/** The last probe and the Main session it looked at (null when there was none). */
interface Kept {
	main: unknown;
	checks: FactCheck[];
	/** The gate changes seen when it was made (gate-check.ts): a later one makes a new probe. */
	epoch: number;
	/** The stderr lines already said for this Main. */
	said: string[];
}

/** The process's last probe (the takeover reads it live); empty before the first start. */
export function processFacts(): readonly FactCheck[] {
	return keptFacts()?.checks ?? [];
}

export function keptFacts(): Kept | null {
	return ((globalThis as Record<symbol, unknown>)[STORE_KEY] as Kept | undefined) ?? null;
}

/** Lines said for one Main at most: a fact's why can name a tool, and tools come and go. */
const SAID_MAX = 64;

/** Keeps a probe for the process and says each missing fact on `log`, once per Main. */
export function keepFacts(kept: Omit<Kept, "said">, log: (line: string) => void): FactCheck[] {
	const before = keptFacts();
	const said = before !== null && before.main === kept.main ? before.said : [];
	const fresh = factLines(kept.checks).filter(l => !said.includes(l));
	(globalThis as Record<symbol, unknown>)[STORE_KEY] = { ...kept, said: [...said, ...fresh].slice(-SAID_MAX) };
	for (const line of fresh) log(line);
	return kept.checks;
}
