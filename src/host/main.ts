/**
 * The host's Main session as the bridge reaches it: through the process-wide agent registry (the
 * same singleton from any import of the package root), never through a ctx captured at start.
 */
// Namespaces, not named imports: an export a newer host moved must not stop the load (host-facts.md).
import { isAbsolute } from "node:path";
import * as ai from "@oh-my-pi/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@oh-my-pi/pi-coding-agent";
import * as agent from "@oh-my-pi/pi-coding-agent";
import { errorText } from "../text/error-text.ts";
import type { HostAccess, HostSession } from "./bridge.ts";
import type { FactCheck } from "./facts.ts";
import { factsFor } from "./facts-probe.ts";
import { tryGates } from "./gate-check.ts";
import { TOOL_FAILED } from "./shapes.ts";

const { AgentRegistry } = agent;

export const logLine = (line: string): void => {
	// stdout is the host's rpc channel: diagnostics go to stderr only.
	process.stderr.write(`${line}\n`);
};

type MainSession = HostSession & { sessionManager?: { getSessionId(): string } };

/** Main as the registry holds it; throws when the registry itself moved (host fact main-session). */
function registryMain(): MainSession | null {
	const ref = AgentRegistry.global().get("Main");
	return (ref?.session as unknown as MainSession | null) ?? null;
}

export function liveMain(): MainSession | null {
	try {
		return registryMain();
	} catch {
		return null;
	}
}

export function isMainBinding(ctx: ExtensionContext): boolean {
	let main: MainSession | null;
	try {
		main = registryMain();
	} catch {
		// The registry moved: subagents still bind in print mode, so the first other binding starts (named on stderr).
		return ctx.mode !== "print";
	}
	if (main === null) return false;
	try {
		if (typeof main.sessionManager?.getSessionId === "function")
			return main.sessionManager.getSessionId() === ctx.sessionManager.getSessionId();
	} catch {}
	// Main cannot name its session: no binding is Main, so the probe says why (host fact main-session).
	liveFacts();
	return false;
}

export function hostAccess(pi: ExtensionAPI): HostAccess {
	return {
		mainSession: liveMain,
		fallbackTools: () => {
			try {
				return pi.getAllTools();
			} catch {
				return [];
			}
		},
		wireSchema: tool => ai.toolWireSchema(tool as Parameters<typeof ai.toolWireSchema>[0]),
		validateArgs: (tool, name, args) => {
			try {
				const call = { type: "toolCall" as const, id: "a2a-bridge", name, arguments: args };
				const validate = ai.validateToolArguments;
				return { ok: true, args: validate(tool as Parameters<typeof validate>[0], call) };
			} catch (err) {
				return { ok: false, why: errorText(err, TOOL_FAILED) };
			}
		},
		log: logLine,
		gateRefused: () => liveFacts(),
	};
}

/** The Main session's working directory, or the host's when Main does not say (the instructions' line). */
export function mainCwd(): string {
	return blobCwd() ?? process.cwd();
}

/** Where relative `/blob` paths resolve: Main's working directory, or null (refused) when it cannot be read. */
export function blobCwd(): string | null {
	try {
		const cwd: unknown = AgentRegistry.global().get("Main")?.session?.sessionManager.getCwd();
		return typeof cwd === "string" && isAbsolute(cwd) ? cwd : null;
	} catch {
		return null;
	}
}

/**
 * The host facts for the Main session there is now (facts-probe.ts): probed at start and again when Main
 * is another session than the last probe saw; each missing fact said once per probe on host stderr.
 */
export function liveFacts(): readonly FactCheck[] {
	return factsFor({ registry: AgentRegistry, ai: ai as unknown as Record<string, unknown> }, liveMain(), logLine);
}

/** At start: every gate class among Main's tools tried first (bounded, 2 s each), then the facts probed. */
export async function factsAtStart(): Promise<void> {
	const main = liveMain();
	if (main !== null) {
		try {
			await tryGates(
				main.getAllToolNames().map(n => main.getToolByName(n)),
				main,
			);
		} catch {
			// A host that throws here is named by the probe below.
		}
	}
	liveFacts();
}
