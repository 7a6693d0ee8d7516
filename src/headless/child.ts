/**
 * The omp child of the headless host: spawned in its own session with the bridge loaded, its rpc
 * frames relayed (notifications printed, approval prompts answered), and stopped with proof that
 * its port is released and no process of its session is left.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { type Subprocess, spawn } from "bun";
import { showLinesSafely, showSafely } from "../text/show.ts";
import type { HostArgs } from "./args.ts";
import type { Approver } from "./cli.ts";
import { answerFrame, cancelFrame, parseCallerLabel, readFrame } from "./frames.ts";
import { LabelQueue } from "./labels.ts";
import { cancelledLine, describeDecision, noticeLine, screenRows, waitingLine } from "./prompt-screen.ts";

/** omp gives `session_shutdown` 2 s after stdin EOF; then SIGTERM, then SIGKILL. */
const EXIT_GRACE_MS = 6_000;
const TERM_GRACE_MS = 3_000;

export const say = (line: string): void => {
	process.stdout.write(`${line}\n`);
};
export const warn = (line: string): void => {
	process.stderr.write(`${line}\n`);
};

/**
 * Columns of the terminal on stdout as the kernel has them at this moment; Infinity when not a terminal.
 * Bun updates `columns` a tick after SIGWINCH, so a prompt drawn right after a resize asks the tty itself.
 */
export const terminalWidth = (): number => {
	if (!process.stdout.isTTY) return Number.POSITIVE_INFINITY;
	(process.stdout as { _refreshSize?: () => void })._refreshSize?.();
	return process.stdout.columns || 80;
};

/** A line that may hold caller text: in rows no screen re-wraps, continuation rows marked (`screenRows`). */
const sayRows = (text: string): void => say(screenRows(text, terminalWidth()).join("\n"));

export interface Omp {
	proc: Subprocess<"pipe", "pipe", "pipe">;
	stderr: string;
	/** After the boot, omp's stderr goes straight to ours. */
	relayStderr: boolean;
	stderrClosed?: Promise<void>;
	url?: string;
	/** Sees each notification first during the boot; true means "consumed, do not print". */
	onNotify?: (message: string) => boolean;
	/** The bridge's approval picture at start, for the banner. */
	picture?: string[];
}

export function send(omp: Omp, line: string): void {
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
	// The bridge's "remote call" notices, each kept for the approval prompt that follows it.
	const labels = new LabelQueue();
	(async () => {
		for await (const line of lines(omp.proc.stdout)) {
			if (!line.trim()) continue;
			const f = readFrame(line);
			if (f.kind === "notify") {
				if (omp.onNotify?.(f.message)) continue;
				const label = parseCallerLabel(f.message);
				if (label && labels.offer(f.message)) {
					// Said at once, so the person knows an answer now may be followed by a prompt not yet read.
					const line = screenRows(waitingLine(label.tool, label.tokenName), terminalWidth()).join("\n");
					if (approver.showing) process.stdout.write(`\n${line}`);
					continue;
				}
				sayRows(noticeLine(f.message, f.level));
			} else if (f.kind === "approval") {
				// The label in the prompt's title wins; the notice before it is the fallback (and is consumed).
				const noticed = labels.take(f.prompt.tool);
				if (noticed && !f.prompt.caller) f.prompt.caller = noticed;
				approver.decide(f.prompt).then(d => {
					send(omp, answerFrame(f.prompt.id, d.value));
					sayRows(describeDecision(f.prompt, d));
				});
			} else if (f.kind === "dialog") {
				send(omp, cancelFrame(f.id));
				sayRows(cancelledLine(f.method, f.title));
			} else if (f.kind === "cancel") {
				approver.withdraw(f.targetId);
			} else if (f.kind === "extension_error") {
				warn(screenRows(`host extension error: ${showLinesSafely(f.message)}`, terminalWidth()).join("\n"));
			} else if (f.kind === "not_json") {
				warn(screenRows(`host stdout (not rpc): ${showSafely(line, 2000)}`, terminalWidth()).join("\n"));
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

/** What starts omp (its CLI under Bun, see omp-cli.ts), the bridge entry and, without a model, the placeholder. */
export interface OmpFiles {
	command: string[];
	entry: string;
	placeholder: string;
	/** The environment omp runs with (the caller's own: its HOME, PATH and the bridge's variables). */
	env: Record<string, string | undefined>;
}

export function startOmp(args: HostArgs, cwd: string, approver: Approver, files: OmpFiles, placeholder: boolean): Omp {
	const cmd = [
		...files.command,
		"--mode",
		"rpc",
		"--no-session",
		"-e",
		files.entry,
		...(placeholder ? ["-e", files.placeholder] : []),
		...args.ompArgs,
	];
	const proc = spawn({ cmd, cwd, env: files.env, stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true });
	const omp: Omp = { proc, stderr: "", relayStderr: false };
	handleFrames(omp, approver);
	return omp;
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

export async function stop(omp: Omp, why: string): Promise<number> {
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
