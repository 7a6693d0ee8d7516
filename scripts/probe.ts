/**
 * One real MCP round trip against a running bridge: initialize, tools/list, then tools/call `bash`
 * with an `echo`. Exit 0 only when the echo came back. The token comes from `A2A_BRIDGE_TOKEN` or the
 * bridge config (`A2A_BRIDGE_CONFIG`, else ~/.omp/agent/a2a-bridge.json), never from the command line,
 * so it does not show up in `ps`. With no URL it takes the one the running bridge wrote into its
 * runtime file next to the config, trusted only when its pid is this user's live process that started
 * when the file says (contract §16); a refused connection is explained from that file.
 */
import { readFileSync } from "node:fs";
import { defaultConfigPath } from "../src/config/config.ts";
import { observePid, readRuntime, runtimePath, trustEntry } from "../src/config/runtime.ts";
import { errorText } from "../src/text/error-text.ts";

/** Long enough for someone to answer an approval prompt on the host's terminal. */
const CALL_TIMEOUT_MS = 5 * 60_000;

function secret(): string {
	const fromEnv = process.env.A2A_BRIDGE_TOKEN;
	if (fromEnv) return fromEnv;
	const path = defaultConfigPath();
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code ?? String(err);
		throw new Error(`no token: cannot read ${path} (${code}); set A2A_BRIDGE_TOKEN or A2A_BRIDGE_CONFIG`);
	}
	const parsed = JSON.parse(text) as { token?: unknown };
	if (typeof parsed.token !== "string") throw new Error(`${path} has no token`);
	return parsed.token;
}

async function rpc(url: string, headers: Record<string, string>, method: string, params: unknown, id: number) {
	const res = await fetch(url, {
		method: "POST",
		headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
		body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
		signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
	});
	const text = await res.text();
	// The bridge may answer as SSE; the JSON-RPC response is the last `data:` line.
	const json = text.startsWith("{")
		? text
		: (text
				.match(/^data: (.*)$/gm)
				?.pop()
				?.slice(6) ?? "");
	if (res.status !== 200) throw new Error(`${method}: HTTP ${res.status} ${text.slice(0, 300)}`);
	const body = JSON.parse(json) as { result?: Record<string, unknown>; error?: { message: string } };
	if (body.error) throw new Error(`${method}: ${body.error.message}`);
	return { result: body.result ?? {}, sid: res.headers.get("mcp-session-id") };
}

/** The live URL from the runtime file, or why there is none (a sentence for the user). */
function liveUrl(): { url: string } | { why: string } {
	const path = runtimePath(defaultConfigPath());
	const r = readRuntime(path);
	if (r.kind === "absent") return { why: `no host is running (no ${path}; start one with npm run host)` };
	if (r.kind === "untrusted") return { why: r.message };
	const trust = trustEntry(r.info, observePid(r.info.pid));
	if (!trust.ok) return { why: `no host is running (${path} ${trust.why}; not used, nothing sent)` };
	return { url: r.info.url };
}

/** A refused connection, said with what the runtime file knows. */
function refused(url: string): string {
	const live = liveUrl();
	const tried = `connection refused at ${url}`;
	if ("why" in live) return `${tried}: ${live.why}`;
	if (new URL(live.url).port === new URL(url).port) return `${tried}, the port the host wrote in its runtime file`;
	return `${tried}; the running host serves ${live.url} (try: npm run probe)`;
}

async function main(): Promise<number> {
	let url = process.argv[2];
	if (url === undefined) {
		const live = liveUrl();
		if ("why" in live) {
			process.stderr.write(`probe: ${live.why}\n`);
			return 1;
		}
		url = live.url;
		console.log(`probe: ${url} (from ${runtimePath(defaultConfigPath())})`);
	} else if (!/^https?:\/\//.test(url)) {
		process.stderr.write("usage: bun scripts/probe.ts [bridge URL, e.g. http://127.0.0.1:8765/]\n");
		return 2;
	}
	try {
		return await probe(url);
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ECONNREFUSED") throw new Error(refused(url));
		throw err;
	}
}

async function probe(url: string): Promise<number> {
	const auth = { authorization: `Bearer ${secret()}` };
	const init = await rpc(
		url,
		auth,
		"initialize",
		{ protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "a2a-probe", version: "0" } },
		0,
	);
	const server = init.result.serverInfo as { name?: string; version?: string } | undefined;
	console.log(`probe: initialize ok (${init.result.protocolVersion}, ${server?.name} ${server?.version})`);
	const headers = { ...auth, ...(init.sid ? { "mcp-session-id": init.sid } : {}) };
	const list = await rpc(url, headers, "tools/list", {}, 1);
	console.log(`probe: tools/list: ${(list.result.tools as unknown[] | undefined)?.length ?? 0} tools`);
	const marker = `a2a-probe-${process.pid}`;
	const call = await rpc(url, headers, "tools/call", { name: "bash", arguments: { command: `echo ${marker}` } }, 2);
	const text = ((call.result.content as Array<{ text?: string }> | undefined) ?? []).map(c => c.text ?? "").join("");
	const first = text.trim().split("\n")[0];
	console.log(`probe: tools/call bash "echo ${marker}" -> ${call.result.isError ? "error: " : ""}${first}`);
	return !call.result.isError && text.includes(marker) ? 0 : 1;
}

main().then(
	code => process.exit(code),
	err => {
		process.stderr.write(`probe: ${errorText(err)}\n`);
		process.exit(1);
	},
);
