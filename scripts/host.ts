/**
 * Headless host (contract §11): runs the pinned omp in rpc mode in the current directory with this
 * checkout's bridge, prints where to connect, relays the host's notifications, answers its approval
 * prompts and serves until Ctrl-C. omp runs in its own session (setsid), so a terminal's Ctrl-C reaches
 * only this process, which closes omp's stdin (omp's own graceful shutdown) and then checks that the
 * port is released and no process of omp's session is left. The pure parts are in `src/headless/`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Subprocess, spawn } from "bun";
import { defaultConfigPath } from "../src/config/config.ts";
import { type HostArgs, parseHostArgs, USAGE } from "../src/headless/args.ts";
import { Approver, describeDecision } from "../src/headless/cli.ts";
import {
	answerFrame,
	cancelFrame,
	isBridgeFailure,
	isMcpEntry,
	isNoModelFailure,
	parseAnnouncement,
	promptFrame,
	readFrame,
} from "../src/headless/frames.ts";

const ROOT = resolve(import.meta.dir, "..");
const OMP_PKG = join(ROOT, "node_modules", "@oh-my-pi", "pi-coding-agent");
const OMP_CLI = join(OMP_PKG, "dist", "cli.js");
const ENTRY = join(ROOT, "extensions", "a2a-bridge.ts");
const PLACEHOLDER = join(ROOT, "scripts", "placeholder-provider.ts");
/** A cold first boot (extension parse cache empty) measured 2-8 s; leave room for slow disks. */
const BOOT_TIMEOUT_MS = 120_000;
const ENTRY_TIMEOUT_MS = 15_000;
/** omp gives `session_shutdown` 2 s after stdin EOF; then SIGTERM, then SIGKILL. */
const EXIT_GRACE_MS = 6_000;
const TERM_GRACE_MS = 3_000;
const MCP_JSON_PROMPT_ID = "a2a-host-mcp-json";

const say = (line: string): void => {
	process.stdout.write(`${line}\n`);
};
const warn = (line: string): void => {
	process.stderr.write(`${line}\n`);
};

interface Omp {
	proc: Subprocess<"pipe", "pipe", "pipe">;
	stderr: string;
	/** After the boot, omp's stderr goes straight to ours. */
	relayStderr: boolean;
	stderrClosed?: Promise<void>;
	url?: string;
	/** Sees each notification first during the boot; true means "consumed, do not print". */
	onNotify?: (message: string) => boolean;
}

function send(omp: Omp, line: string): void {
	try {
		omp.proc.stdin.write(line);
		omp.proc.stdin.flush();
	} catch {
		// omp already exited; its exit handler reports that.
	}
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
	const decoder = new TextDecoder();
	let buf = "";
	for await (const chunk of stream) {
		buf += decoder.decode(chunk, { stream: true });
		for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
			yield buf.slice(0, nl);
			buf = buf.slice(nl + 1);
		}
	}
	if (buf) yield buf;
}

function handleFrames(omp: Omp, approver: Approver): void {
	(async () => {
		for await (const line of lines(omp.proc.stdout)) {
			if (!line.trim()) continue;
			const f = readFrame(line);
			if (f.kind === "notify") {
				if (omp.onNotify?.(f.message)) continue;
				say(f.level === "info" ? `host: ${f.message}` : `host [${f.level}]: ${f.message}`);
			} else if (f.kind === "approval") {
				approver.decide(f.prompt).then(d => {
					send(omp, answerFrame(f.prompt.id, d.value));
					say(describeDecision(f.prompt, d));
				});
			} else if (f.kind === "dialog") {
				send(omp, cancelFrame(f.id));
				say(`host asked (${f.method}) "${f.title.split("\n")[0]}" -> cancelled: nobody can answer that headless`);
			} else if (f.kind === "cancel") {
				approver.withdraw(f.targetId);
			} else if (f.kind === "extension_error") {
				warn(`host extension error: ${f.message}`);
			} else if (f.kind === "not_json") {
				warn(`host stdout (not rpc): ${line}`);
			}
		}
	})().catch(err => warn(`a2a host: reading omp's output failed: ${err}`));
	omp.stderrClosed = (async () => {
		const decoder = new TextDecoder();
		for await (const chunk of omp.proc.stderr) {
			const text = decoder.decode(chunk, { stream: true });
			if (omp.relayStderr) process.stderr.write(text);
			else omp.stderr += text;
		}
	})().catch(() => {});
}

function startOmp(args: HostArgs, cwd: string, approver: Approver, placeholder: boolean): Omp {
	const cmd = [
		process.execPath,
		// A mistaken import must never make Bun fetch packages while serving.
		"--no-install",
		OMP_CLI,
		"--mode",
		"rpc",
		"--no-session",
		"-e",
		ENTRY,
		...(placeholder ? ["-e", PLACEHOLDER] : []),
		...args.ompArgs,
	];
	const proc = spawn({ cmd, cwd, env: process.env, stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true });
	const omp: Omp = { proc, stderr: "", relayStderr: false };
	handleFrames(omp, approver);
	return omp;
}

type Boot =
	| { kind: "serving"; url: string; tokenPrefix: string; entry: string | undefined }
	| { kind: "no_model" }
	| { kind: "failed"; message: string };

/** Resolves once the bridge announced itself (and its mcpServers entry came back), or omp gave up. */
function boot(omp: Omp): Promise<Boot> {
	return new Promise(done => {
		let announced: { url: string; tokenPrefix: string } | undefined;
		const finish = (b: Boot): void => {
			clearTimeout(timer);
			clearTimeout(entryTimer);
			done(b);
		};
		const timer = setTimeout(
			() => finish({ kind: "failed", message: `the bridge did not start within ${BOOT_TIMEOUT_MS / 1000} s` }),
			BOOT_TIMEOUT_MS,
		);
		let entryTimer: ReturnType<typeof setTimeout> | undefined;
		omp.onNotify = message => {
			if (announced && isMcpEntry(message)) {
				finish({ kind: "serving", ...announced, entry: message });
				return true;
			}
			if (isBridgeFailure(message)) finish({ kind: "failed", message });
			const a = parseAnnouncement(message);
			if (a && !announced) {
				announced = a;
				say(`host: ${message}`);
				send(omp, promptFrame(MCP_JSON_PROMPT_ID, "/a2a mcp-json"));
				entryTimer = setTimeout(() => finish({ kind: "serving", ...a, entry: undefined }), ENTRY_TIMEOUT_MS);
				return true;
			}
			return false;
		};
		omp.proc.exited.then(async code => {
			// The exit can be seen before the last stderr chunk is read; the verdict is in that text.
			await Promise.race([omp.stderrClosed, Bun.sleep(2000)]);
			if (isNoModelFailure(omp.stderr)) finish({ kind: "no_model" });
			else finish({ kind: "failed", message: `omp exited with code ${code} before the bridge started` });
		});
	});
}

/** Pids of live processes in omp's session (it is the session leader after setsid). Linux only. */
function sessionMembers(sid: number): number[] {
	if (!existsSync("/proc/self/stat")) return [];
	const found: number[] = [];
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const stat = readFileSync(`/proc/${name}/stat`, "utf8");
			// Fields after "(comm)": state ppid pgrp session ...; comm itself may contain spaces.
			const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			if (Number(fields[3]) === sid && fields[0] !== "Z") found.push(Number(name));
		} catch {
			// The process ended while we looked.
		}
	}
	return found;
}

async function portOpen(url: string): Promise<boolean> {
	const { hostname, port } = new URL(url);
	try {
		const sock = await Bun.connect({
			hostname: hostname.replace(/^\[|\]$/g, ""),
			port: Number(port),
			socket: { data() {}, error() {} },
		});
		sock.end();
		return true;
	} catch {
		return false;
	}
}

const exitedWithin = (proc: Subprocess, ms: number): Promise<boolean> =>
	Promise.race([proc.exited.then(() => true), Bun.sleep(ms).then(() => false)]);

async function stop(omp: Omp, why: string): Promise<number> {
	say(`a2a host: stopping (${why})`);
	try {
		omp.proc.stdin.end();
	} catch {}
	let how = "closed its stdin; omp shut down";
	if (!(await exitedWithin(omp.proc, EXIT_GRACE_MS))) {
		how = `omp still running ${EXIT_GRACE_MS / 1000} s after its stdin closed; sent SIGTERM`;
		omp.proc.kill("SIGTERM");
		if (!(await exitedWithin(omp.proc, TERM_GRACE_MS))) {
			how += ", then SIGKILL";
			omp.proc.kill("SIGKILL");
			await omp.proc.exited;
		}
	}
	const left = sessionMembers(omp.proc.pid);
	for (const pid of left) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {}
	}
	const stillOpen = omp.url ? await portOpen(omp.url) : false;
	const code = omp.proc.exitCode;
	say(
		`a2a host: ${how} (exit ${code ?? omp.proc.signalCode}); ` +
			`${omp.url ? `port ${new URL(omp.url).port} ${stillOpen ? "STILL OPEN" : "released"}; ` : ""}` +
			`${left.length > 0 ? `killed ${left.length} leftover process(es): ${left.join(", ")}` : "no process left"}`,
	);
	return code === 0 && !stillOpen && left.length === 0 ? 0 : 1;
}

function ompVersion(): string {
	try {
		return String(JSON.parse(readFileSync(join(OMP_PKG, "package.json"), "utf8")).version);
	} catch {
		return "?";
	}
}

function printServing(b: Extract<Boot, { kind: "serving" }>, omp: Omp, cwd: string): void {
	say("");
	say(`a2a host: serving ${cwd}`);
	say(`  URL:     ${b.url}`);
	say(`  token:   ${b.tokenPrefix} (full token in ${defaultConfigPath()})`);
	say(`  omp pid: ${omp.proc.pid}`);
	if (b.entry) {
		say("  mcpServers entry (for ~/.omp/agent/mcp.json; other clients: see README):");
		say(b.entry);
	} else {
		warn(`a2a host: the host did not answer /a2a mcp-json within ${ENTRY_TIMEOUT_MS / 1000} s`);
	}
	say("a2a host: Ctrl-C stops");
}

async function main(): Promise<number> {
	const parsed = parseHostArgs(process.argv.slice(2), process.stdin.isTTY === true);
	if (!parsed.ok) {
		warn(`a2a host: ${parsed.message}\n\n${USAGE}`);
		return 2;
	}
	const args = parsed.value;
	if (args.help) {
		say(USAGE);
		return 0;
	}
	// `npm run` starts scripts in the package root; INIT_CWD is where the user typed the command.
	const fromNpm = process.env.npm_lifecycle_event === "host" ? process.env.INIT_CWD : undefined;
	const cwd = resolve(args.cwd ?? fromNpm ?? process.cwd());
	if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
		warn(`a2a host: --cwd: '${cwd}' is not a directory`);
		return 2;
	}
	if (!existsSync(OMP_CLI)) {
		warn(`a2a host: ${OMP_CLI} not found; run npm install in ${ROOT} first`);
		return 1;
	}
	const approver = new Approver({
		mode: args.approvals,
		timeoutMs: args.approvalTimeoutMs,
		input: args.approvals === "ask" ? process.stdin : undefined,
		output: process.stdout,
	});
	say(`a2a host: omp ${ompVersion()} in ${cwd}; approvals: ${args.approvals} (${args.approvalsSource})`);

	let omp = startOmp(args, cwd, approver, false);
	let stopping: Promise<number> | undefined;
	const onSignal = (sig: string): void => {
		if (stopping) {
			say(`a2a host: ${sig} again; still stopping`);
			return;
		}
		stopping = stop(omp, sig);
		stopping.then(code => process.exit(code));
	};
	for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => onSignal(sig));

	let b = await boot(omp);
	if (b.kind === "no_model" && !stopping) {
		say(
			"a2a host: omp has no model configured; this run adds a placeholder provider (scripts/placeholder-provider.ts)" +
				" for this process only, written nowhere. The bridge needs no model.",
		);
		omp = startOmp(args, cwd, approver, true);
		b = await boot(omp);
	}
	if (stopping) return stopping;
	if (b.kind !== "serving") {
		warn(`a2a host: ${b.kind === "failed" ? b.message : "omp found no model"}`);
		if (omp.stderr.trim()) warn(`omp stderr:\n${omp.stderr.trimEnd()}`);
		return omp.proc.exitCode === null ? stop(omp, "the bridge did not start").then(() => 1) : 1;
	}
	omp.url = b.url;
	omp.onNotify = undefined;
	omp.relayStderr = true;
	if (omp.stderr) process.stderr.write(omp.stderr);
	printServing(b, omp, cwd);
	const code = await omp.proc.exited;
	if (stopping) return stopping;
	warn(`a2a host: omp exited unexpectedly with code ${code ?? omp.proc.signalCode}`);
	return typeof code === "number" && code !== 0 ? code : 1;
}

main().then(
	code => process.exit(code),
	err => {
		warn(`a2a host: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
		process.exit(1);
	},
);
