/**
 * The headless host's share of the bridge's prompt queue (contract §19): the bounds it hands to omp's
 * environment from its own flags, and the command the person at its terminal types to deny one token's
 * whole queue. Pure. The variable names are the bridge's (src/host/prompt-queue.ts; a unit test holds both
 * to one spelling), since the headless host never imports the bridge.
 */
import type { HostArgs } from "./args.ts";

/** The command that denies one token's whole queue. */
export const DENY_QUEUE = "deny-queue";
/** Token names as the config accepts them (src/config/tokens.ts; a unit test holds both to one pattern). @internal */
export const TOKEN_NAME_RE = /^[a-z0-9_-]{1,32}$/;

/** `deny-queue NAME` -> NAME; a malformed one -> ""; any other line -> undefined. */
export function readDenyQueue(line: string): string | undefined {
	const words = line.trim().split(/\s+/);
	if (words[0]?.toLowerCase() !== DENY_QUEUE) return undefined;
	return words.length === 2 && TOKEN_NAME_RE.test(words[1] ?? "") ? (words[1] as string) : "";
}

/** The bridge's queue bounds from the host's flags: prompts waiting per token, and seconds a prompt waits its turn. */
export function queueEnv(args: Pick<HostArgs, "approvalQueue" | "approvalTimeoutMs">): Record<string, string> {
	return {
		A2A_BRIDGE_APPROVAL_QUEUE: String(args.approvalQueue),
		A2A_BRIDGE_APPROVAL_WAIT_S: String(args.approvalTimeoutMs / 1000),
	};
}
