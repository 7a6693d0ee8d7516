/**
 * One real MCP round trip against a running bridge: initialize, tools/list, then tools/call `bash`
 * with an `echo`. Exit 0 only when the echo came back. The token comes from `A2A_BRIDGE_TOKEN` or the
 * bridge config (`A2A_BRIDGE_CONFIG`, else ~/.omp/agent/a2a-bridge.json), never from the command line,
 * so it does not show up in `ps`. With no URL it takes the running bridge's from the runtime record next
 * to the config: the only one, or the one serving the current directory; when it cannot tell, it lists
 * them (exit 2). An entry is trusted only when its pid is this user's live process that started when the
 * entry says (contract §16). A refused connection is explained from that record.
 */
import { readFileSync } from "node:fs";
import { defaultConfigPath } from "../src/config/config.ts";
import { configName } from "../src/config/paths.ts";
import { observePid, trustEntry } from "../src/config/pids.ts";
import { pickEntry, type RuntimeEntry, readRuntime, runtimePath } from "../src/config/runtime.ts";
import { errorText } from "../src/text/error-text.ts";

/** Long enough for someone to answer an approval prompt on the host's terminal. */
const CALL_TIMEOUT_MS = 5 * 60_000;

function secret(): string {
	const fromEnv = process.env.A2A_BRIDGE_TOKEN;
	if (fromEnv) return fromEnv;
	const path = defaultConfigPath(process.env);
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

// `npm run` starts scripts in the package root; INIT_CWD is where the user typed the command.
const HERE = process.env.npm_lifecycle_event === "probe" ? (process.env.INIT_CWD ?? process.cwd()) : process.cwd();

const describe = (e: RuntimeEntry): string => `  ${e.url}  pid ${e.pid}, serving ${e.cwd}, since ${e.started}`;

/** The runtime record beside the file the config's name reaches, where a host on that config lists itself. */
const recordPath = (): string => runtimePath(configName(defaultConfigPath(process.env), process.cwd()).file);

/** The record's trusted entries, or why there are none (a sentence for the user). */
function liveEntries(): { entries: RuntimeEntry[] } | { why: string } {
	const path = recordPath();
	const r = readRuntime(path);
	if (r.kind === "absent") return { why: `no host is running (no ${path}; start one with npm run host)` };
	if (r.kind === "untrusted") return { why: r.message };
	const verdicts = r.entries.map(e => ({ e, trust: trustEntry(e, observePid(e.pid)) }));
	const entries = verdicts.filter(v => v.trust.ok).map(v => v.e);
	if (entries.length > 0) return { entries };
	const whys = verdicts.map(v => (v.trust.ok ? "" : v.trust.why)).join("; ");
	return { why: `no host is running (${path} ${whys || "lists no host"}; not used, nothing sent)` };
}

/** The live URL from the runtime record, or why there is none (a sentence for the user, and the exit code). */
function liveUrl(): { url: string } | { why: string; code: number } {
	const live = liveEntries();
	if ("why" in live) return { why: live.why, code: 1 };
	const pick = pickEntry(live.entries, HERE);
	if (pick.kind === "one") return { url: pick.entry.url };
	if (pick.kind === "none") return { why: "no host is running", code: 1 };
	const list = pick.entries.map(describe).join("\n");
	const why = `${pick.entries.length} hosts run and none serves ${HERE}; pass one URL (npm run probe -- URL):\n${list}`;
	return { why, code: 2 };
}

/** A refused connection, said with what the runtime record knows. */
function refused(url: string): string {
	const tried = `connection refused at ${url}`;
	const r = liveEntries();
	if ("why" in r) return `${tried}: ${r.why}`;
	if (r.entries.some(e => e.port === Number(new URL(url).port)))
		return `${tried}, a port a host wrote in its runtime record`;
	const [only] = r.entries;
	if (r.entries.length === 1 && only) return `${tried}; the running host serves ${only.url} (try: npm run probe)`;
	return `${tried}; running hosts serve:\n${r.entries.map(describe).join("\n")}`;
}

async function main(): Promise<number> {
	let url = process.argv[2];
	if (url === undefined) {
		const live = liveUrl();
		if ("why" in live) {
			process.stderr.write(`probe: ${live.why}\n`);
			return live.code;
		}
		url = live.url;
		console.log(`probe: ${url} (from ${recordPath()})`);
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
