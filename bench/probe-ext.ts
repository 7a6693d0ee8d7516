/**
 * Loaded into the benchmark host with `-e`: `/bench-probe <tag> <json>` measures inside the host and writes
 * `BENCH-PROBE <tag> <json result>` to stderr (the host's stdout is its rpc channel). Ops:
 * - `exec`: the Main session's tool run n times in-process, called the way src/host/bridge.ts calls it
 *   (registry lookup, then `execute(id, args, signal, undefined, undefined)`): the tool without the bridge;
 * - `console`: console round trips through `hub` called the same way (bench/console.ts);
 * - `serve`: starts, in this process, the bare reference (bench/bare.ts), the same bare server doing the
 *   same work (given the host's catalog), and the bridge's own core (bench/core.ts: `BridgeServer` with a
 *   real audit log and `/blob`) over a fake host adapter that lists the given catalog and answers every
 *   call at once with what the given tool answered once: the bridge's own path with no host part.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { ExtensionAPI } from "@oh-my-pi/pi-coding-agent";
import { AgentRegistry } from "@oh-my-pi/pi-coding-agent";
import type { McpTool, ToolCallOutcome } from "../src/core/types.ts";
import { type HostSession, mapContent } from "../src/host/bridge.ts";
import { serveBare } from "./bare.ts";
import { consoleRoundTrips } from "./console.ts";
import { serveCore } from "./core.ts";

type Tool = ReturnType<HostSession["getToolByName"]>;

function mainTool(name: string): NonNullable<Tool> {
	const main = AgentRegistry.global().get("Main")?.session as unknown as HostSession | null | undefined;
	const tool = main?.getAllToolNames().includes(name) ? main.getToolByName(name) : undefined;
	if (!tool) throw new Error(`no ${name} tool on a live Main session`);
	return tool;
}

async function run(name: string, args: Record<string, unknown>): Promise<{ text: string; outcome: ToolCallOutcome }> {
	const result = await mainTool(name).execute(
		crypto.randomUUID(),
		args,
		new AbortController().signal,
		undefined,
		undefined,
	);
	const outcome = { content: mapContent(result?.content), isError: result?.isError === true };
	if (outcome.isError) throw new Error(`${name}: ${JSON.stringify(outcome.content).slice(0, 300)}`);
	return { text: outcome.content.map(c => (c.type === "text" ? c.text : "")).join("\n"), outcome };
}

interface Spec {
	op: "exec" | "console" | "serve";
	tool?: string;
	args?: Record<string, unknown>;
	n?: number;
	name?: string;
	tag?: string;
	token?: string;
	/** The core's named tokens beside `token` (bench/round-tokens.ts). */
	tokens?: Array<{ name: string; token: string }>;
	/** The host's catalog as a JSON file: the core's constant list and the same-work bare's. */
	catalog?: string;
}

const round4 = (xs: number[]) => xs.map(x => Math.round(x * 1e4) / 1e4);

async function probe(spec: Spec): Promise<unknown> {
	if (spec.op === "exec") {
		const ms: number[] = [];
		for (let i = 0; i < (spec.n ?? 0); i++) {
			const t0 = performance.now();
			await run(spec.tool ?? "", spec.args ?? {});
			ms.push(performance.now() - t0);
		}
		return { ms: round4(ms) };
	}
	if (spec.op === "console") {
		const call = async (args: Record<string, unknown>) => (await run("hub", args)).text;
		return { ms: round4(await consoleRoundTrips(call, spec.name ?? "", spec.n ?? 0, spec.tag ?? "p")) };
	}
	const { outcome } = await run(spec.tool ?? "", spec.args ?? {});
	const token = spec.token ?? "";
	const catalog = spec.catalog ? readFileSync(spec.catalog, "utf8") : "[]";
	const tools = JSON.parse(catalog) as McpTool[];
	const fake = serveCore({ token, ...(spec.tokens ? { tokens: spec.tokens } : {}), home: homedir(), tools, outcome });
	return { bare: serveBare().port, fake, same: serveBare({ token, catalog }).port };
}

export default function benchProbe(pi: ExtensionAPI): void {
	pi.registerCommand("bench-probe", {
		description: "Benchmark probe: in-process tool runs, console round trips, in-host reference servers",
		handler: async text => {
			const at = text.indexOf(" ");
			const tag = text.slice(0, at);
			let out: unknown;
			try {
				out = await probe(JSON.parse(text.slice(at + 1)) as Spec);
			} catch (err) {
				out = { error: String(err) };
			}
			process.stderr.write(`BENCH-PROBE ${tag} ${JSON.stringify(out)}\n`);
		},
	});
}
