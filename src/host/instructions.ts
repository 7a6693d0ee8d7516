/**
 * The server `instructions` (contract §20): a few lines, true for this host, on how long work, interactive
 * programs and large files are done here. Built from the tool names the host lists right now and the `/blob`
 * setting, so a line names `hub` or `bash` only when the host has it, and `/blob` only as far as it is served.
 */
import type { BridgeConfig } from "../config/config.ts";

export interface InstructionFacts {
	/** The Main session's working directory. */
	cwd: string;
	/** Names of the tools the host lists (tools/list). */
	tools: readonly string[];
	blob: BridgeConfig["blob"];
}

export function instructionsFor(facts: InstructionFacts): string {
	const has = new Set(facts.tools);
	const lines = [
		`Tools of the omp host in ${facts.cwd}, run in its Main session through the host's own approval gate.`,
	];
	if (has.has("hub")) {
		lines.push(
			'Long work and interactive programs (builds, serial consoles, REPLs): hub op "start" runs a program (on a pty ' +
				'by default) that outlives this call and any client; "send" with its name types text or keys (CTRL_C); ' +
				'"logs" returns the output and a cursor, and "logs" with that cursor and follow waits for newer output; ' +
				'"ps" shows exit status; "stop" ends it. A "wait" pattern also matches output printed before the call: ' +
				"type a fresh marker first and wait for the marker followed by what you expect.",
		);
	} else {
		lines.push(
			"This host lists no hub tool: no program keeps running between calls, so work must end within one call.",
		);
	}
	if (has.has("bash")) {
		lines.push(
			"bash answers when the command ends; with a progress token its output streams until the host backgrounds " +
				"the command (after 60 s by default), then heartbeats until the result. An answer keeps about 50 KB of " +
				"output (the middle is cut): send long output to a file.",
		);
	}
	const files = {
		write:
			"Large files do not go through tool calls: on this same URL with the same token, PUT /blob?path=P uploads " +
			"(Repr-Digest: sha-256=:<base64>: refuses a mismatch) and GET /blob?path=P downloads (Range; Want-Repr-Digest).",
		read:
			"Large files do not go through tool calls: on this same URL with the same token, GET /blob?path=P downloads " +
			"(Range; Want-Repr-Digest); uploads are off on this host.",
		off: "The /blob route is off on this host: files move only through the host's tools.",
	};
	lines.push(files[facts.blob]);
	return lines.join("\n");
}
