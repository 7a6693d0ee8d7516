/**
 * The host's Main session as the bridge reaches it: through the process-wide agent registry (the
 * same singleton from any import of the package root), never through a ctx captured at start.
 */
import { toolWireSchema, validateToolArguments } from "@oh-my-pi/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@oh-my-pi/pi-coding-agent";
import { AgentRegistry } from "@oh-my-pi/pi-coding-agent";
import { errorText } from "../text/error-text.ts";
import type { HostAccess, HostSession } from "./bridge.ts";
import { TOOL_FAILED } from "./shapes.ts";

export const logLine = (line: string): void => {
	// stdout is the host's rpc channel: diagnostics go to stderr only.
	process.stderr.write(`${line}\n`);
};

export function liveMain(): (HostSession & { sessionManager?: { getSessionId(): string } }) | null {
	const ref = AgentRegistry.global().get("Main");
	return (ref?.session as unknown as (HostSession & { sessionManager?: { getSessionId(): string } }) | null) ?? null;
}

export function isMainBinding(ctx: ExtensionContext): boolean {
	const main = liveMain();
	if (!main?.sessionManager) return false;
	try {
		return main.sessionManager.getSessionId() === ctx.sessionManager.getSessionId();
	} catch {
		return false;
	}
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
		wireSchema: tool => toolWireSchema(tool as Parameters<typeof toolWireSchema>[0]),
		validateArgs: (tool, name, args) => {
			try {
				const call = { type: "toolCall" as const, id: "a2a-bridge", name, arguments: args };
				return { ok: true, args: validateToolArguments(tool as Parameters<typeof validateToolArguments>[0], call) };
			} catch (err) {
				return { ok: false, message: errorText(err, TOOL_FAILED) };
			}
		},
		log: logLine,
	};
}

/** The Main session's working directory (relative `/blob` paths resolve against it). */
export function mainCwd(): string {
	return AgentRegistry.global().get("Main")?.session?.sessionManager.getCwd() ?? process.cwd();
}
