/**
 * Headless host (contract §11): runs the pinned omp in rpc mode in the current directory with this
 * checkout's bridge, prints where to connect, relays the host's notifications, answers its approval
 * prompts and serves until Ctrl-C. omp runs in its own session (setsid), so a terminal's Ctrl-C reaches
 * only this process, which closes omp's stdin (omp's own graceful shutdown) and then checks that the
 * port is released and no process of omp's session is left. The pure parts are in `src/headless/`.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultConfigPath } from "../src/config/config.ts";
import { type HostArgs, parseHostArgs, USAGE } from "../src/headless/args.ts";
import { type Omp, say, send, startOmp, stop, terminalWidth, warn } from "../src/headless/child.ts";
import { Approver } from "../src/headless/cli.ts";
import {
	isBridgeFailure,
	isMcpEntry,
	isNoModelFailure,
	parseAnnouncement,
	parseApprovalPicture,
	promptFrame,
	TOKEN_PLACEHOLDER,
	withTokenPlaceholder,
} from "../src/headless/frames.ts";
import { findOmpCli } from "../src/headless/omp-cli.ts";
import { describeAnswerer } from "../src/headless/prompt-screen.ts";
import { DENY_QUEUE, queueEnv } from "../src/headless/queue-command.ts";
import { errorDetail } from "../src/text/error-text.ts";
import { showSafely } from "../src/text/show.ts";

const ROOT = resolve(import.meta.dir, "..");
const ENTRY = join(ROOT, "extensions", "a2a-bridge.ts");
const PLACEHOLDER = join(ROOT, "scripts", "placeholder-provider.ts");
// In a checkout, the pinned omp; in an installed plugin (no node_modules), the omp on PATH.
const OMP = findOmpCli(ROOT, process.execPath, {
	readPackage: path => (existsSync(path) ? readFileSync(path, "utf8") : undefined),
	whichOmp: () => {
		const found = Bun.which("omp");
		return found ? realpathSync(found) : undefined;
	},
});
/** A cold first boot (extension parse cache empty) measured 2-8 s; leave room for slow disks. */
const BOOT_TIMEOUT_MS = 120_000;
const ENTRY_TIMEOUT_MS = 15_000;
const MCP_JSON_PROMPT_ID = "a2a-host-mcp-json";

type Boot =
	| { kind: "serving"; url: string; tokenPrefix: string; note?: string; entry: string | undefined }
	| { kind: "no_model" }
	| { kind: "failed"; message: string };

/** Resolves once the bridge announced itself (and its mcpServers entry came back), or omp gave up. */
function boot(omp: Omp): Promise<Boot> {
	return new Promise(done => {
		let announced: { url: string; tokenPrefix: string; note?: string } | undefined;
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
			// The start notice carries the URL line and the approval picture in one message.
			const picture = parseApprovalPicture(message);
			if (picture) omp.picture = picture;
			const a = parseAnnouncement(message);
			if (a && !announced) {
				announced = a;
				say(`host: ${message.split("\n")[0]}`);
				send(omp, promptFrame(MCP_JSON_PROMPT_ID, "/a2a mcp-json"));
				entryTimer = setTimeout(() => finish({ kind: "serving", ...a, entry: undefined }), ENTRY_TIMEOUT_MS);
				return true;
			}
			return picture !== null;
		};
		omp.proc.exited.then(async code => {
			// The exit can be seen before the last stderr chunk is read; the verdict is in that text.
			await Promise.race([omp.stderrClosed, Bun.sleep(2000)]);
			if (isNoModelFailure(omp.stderr)) finish({ kind: "no_model" });
			else finish({ kind: "failed", message: `omp exited with code ${code} before the bridge started` });
		});
	});
}

function printServing(b: Extract<Boot, { kind: "serving" }>, omp: Omp, cwd: string, args: HostArgs): void {
	say("");
	say(`a2a host: serving ${cwd}`);
	say(`  URL:     ${b.url}${b.note ? `  (${b.note})` : ""}`);
	say(
		`  token:   ${b.tokenPrefix} (full token: "token" in ${defaultConfigPath(process.env)}, or /a2a token in an omp TUI)`,
	);
	say(`  omp pid: ${omp.proc.pid}`);
	say("  what a remote call meets (the host's own approval settings):");
	for (const line of omp.picture ?? ["approvals: the bridge did not report the host's approval settings"]) {
		say(`    ${showSafely(line)}`);
	}
	say(`    ${describeAnswerer(args.approvals, args.approvalTimeoutMs)}`);
	if (args.approvals === "ask")
		say(`    remote calls' prompts take turns across tokens; type "${DENY_QUEUE} NAME" to deny all of token NAME's`);
	if (b.entry) {
		say(
			`  mcpServers entry (for ~/.omp/agent/mcp.json; other clients: see README); put the token in for ${TOKEN_PLACEHOLDER}:`,
		);
		say(withTokenPlaceholder(b.entry));
	} else {
		warn(`a2a host: the host did not answer /a2a mcp-json within ${ENTRY_TIMEOUT_MS / 1000} s`);
	}
	say("a2a host: Ctrl-C stops");
}

// Named for what it does: it answers a prompt omp raises; whether one is raised is omp's approval mode.
const ANSWERS = {
	ask: "a prompt omp raises is asked here",
	deny: "a prompt omp raises is answered Deny",
	approve: "a prompt omp raises is answered Approve",
} as const;

/** The arguments and the directory omp runs in; or the exit code when they allow no start (usage, --help). */
function startingPoint(): { args: HostArgs; cwd: string } | number {
	const parsed = parseHostArgs(process.argv.slice(2), process.stdin.isTTY === true);
	if (!parsed.ok) {
		warn(`a2a host: ${parsed.why}\n\n${USAGE}`);
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
	return { args, cwd };
}

/** The terminal's approver; its "deny this token's queue" goes to the omp running now (`live.omp`). */
function approverFor(args: HostArgs, live: { omp?: Omp }): Approver {
	return new Approver({
		mode: args.approvals,
		timeoutMs: args.approvalTimeoutMs,
		input: args.approvals === "ask" ? process.stdin : undefined,
		output: process.stdout,
		width: terminalWidth,
		// The bridge's answer (how many were denied) comes back as a notification, printed like any other.
		denyQueue: token => {
			if (live.omp) send(live.omp, promptFrame(`a2a-host-deny-queue-${token}`, `/a2a ${DENY_QUEUE} ${token}`));
		},
	});
}

async function main(): Promise<number> {
	const start = startingPoint();
	if (typeof start === "number") return start;
	const { args, cwd } = start;
	if (OMP.kind === "missing") {
		warn(`a2a host: ${OMP.message}`);
		return 1;
	}
	// The bridge's prompt queue takes its bounds from these flags (src/headless/queue-command.ts).
	const env = { ...process.env, ...queueEnv(args) };
	const files = { command: OMP.command, entry: ENTRY, placeholder: PLACEHOLDER, env };
	const live: { omp?: Omp } = {};
	const approver = approverFor(args, live);
	say(
		`a2a host: omp ${OMP.version}${OMP.from === "PATH" ? " (on PATH)" : ""} in ${cwd}; ${ANSWERS[args.approvals]} (${args.approvalsSource}); what runs unprompted: below`,
	);

	let omp = startOmp(args, cwd, approver, files, false);
	live.omp = omp;
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
		omp = startOmp(args, cwd, approver, files, true);
		live.omp = omp;
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
	printServing(b, omp, cwd, args);
	const code = await omp.proc.exited;
	if (stopping) return stopping;
	warn(`a2a host: omp exited unexpectedly with code ${code ?? omp.proc.signalCode}`);
	return typeof code === "number" && code !== 0 ? code : 1;
}

main().then(
	code => process.exit(code),
	err => {
		warn(`a2a host: ${errorDetail(err)}`);
		process.exit(1);
	},
);
