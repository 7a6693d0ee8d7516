/**
 * `npm run host` arguments (contract §11): `--approvals`, `--approval-timeout`, `--cwd`, `--help`, and
 * everything after a second `--` handed to omp. Pure: a value or a message naming the bad flag.
 */

export type ApprovalsMode = "ask" | "deny" | "approve";
const APPROVALS_MODES: readonly ApprovalsMode[] = ["ask", "deny", "approve"];
/** @internal */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60_000;
const MAX_APPROVAL_TIMEOUT_S = 24 * 60 * 60;
/** @internal */
export const DEFAULT_APPROVAL_QUEUE = 3;
const MAX_APPROVAL_QUEUE = 256;

export interface HostArgs {
	approvals: ApprovalsMode;
	/** Why this mode: the flag, or the terminal check that chose the default. */
	approvalsSource: string;
	approvalTimeoutMs: number;
	/** Remote calls' prompts one token may have waiting in the bridge's queue (the one on screen not counted). */
	approvalQueue: number;
	cwd: string | undefined;
	/** Everything after a literal `--`, passed to omp unchanged. */
	ompArgs: string[];
	help: boolean;
}

export type ArgsResult =
	| { ok: true; value: HostArgs }
	| { ok: false; code: "unknown_option" | "missing_value" | "bad_value"; why: string };

export const USAGE = `usage: npm run host -- [options] [-- <omp options>]
       bun scripts/host.ts -- [options] [-- <omp options>]   (Bun drops a '--' right after the script)

Starts the pinned omp in rpc mode in the current directory with this checkout's A2A bridge,
prints the URL, the token prefix and an mcpServers entry, and serves until Ctrl-C.

options:
  --approvals ask|deny|approve   answer the host's approval prompts: ask on this terminal (default
                                 when stdin is a terminal), deny at once (default otherwise), approve
  --approval-timeout <seconds>   in ask mode, Deny when nobody answers within this time (default 60);
                                 a prompt waiting for its turn is refused after this time too
  --approval-queue <n>           prompts one token may have waiting for their turn (default 3); more
                                 are refused (the call does not run), not denied

Remote calls' prompts show one at a time, taking turns across tokens. In ask mode, type
"deny-queue NAME" to answer Deny to token NAME's prompt on screen and all its waiting ones.
  --cwd <dir>                    serve this directory instead of the current one
  -h, --help                     this text`;

const WHAT: Record<string, string> = {
	"--approvals": "ask, deny or approve",
	"--cwd": "a directory",
	"--approval-queue": "a number of prompts",
};

/** Reads `--flag value` and `--flag=value`; returns the value and how many argv slots it used. */
function flagValue(argv: string[], i: number, flag: string): { value: string | undefined; used: number } {
	const arg = argv[i] ?? "";
	if (arg.startsWith(`${flag}=`)) return { value: arg.slice(flag.length + 1), used: 1 };
	const next = argv[i + 1];
	return next === undefined || next.startsWith("--") ? { value: undefined, used: 1 } : { value: next, used: 2 };
}

export function parseHostArgs(argv: string[], isStdinTTY: boolean): ArgsResult {
	const out: HostArgs = {
		approvals: isStdinTTY ? "ask" : "deny",
		approvalsSource: isStdinTTY ? "default: stdin is a terminal" : "default: stdin is not a terminal",
		approvalTimeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
		approvalQueue: DEFAULT_APPROVAL_QUEUE,
		cwd: undefined,
		ompArgs: [],
		help: false,
	};
	for (let i = 0; i < argv.length; ) {
		const arg = argv[i] ?? "";
		const name = arg.split("=", 1)[0] ?? arg;
		if (arg === "--") {
			out.ompArgs = argv.slice(i + 1);
			break;
		}
		if (arg === "-h" || arg === "--help") {
			out.help = true;
			i++;
			continue;
		}
		if (!["--approvals", "--approval-timeout", "--approval-queue", "--cwd"].includes(name)) {
			return { ok: false, code: "unknown_option", why: `unknown option '${arg}' (omp options go after '--')` };
		}
		const { value, used } = flagValue(argv, i, name);
		i += used;
		if (value === undefined || value === "") {
			const what = WHAT[name] ?? "seconds";
			return { ok: false, code: "missing_value", why: `${name} needs a value: ${what}` };
		}
		if (name === "--approvals") {
			if (!APPROVALS_MODES.includes(value as ApprovalsMode)) {
				return { ok: false, code: "bad_value", why: `--approvals: '${value}' is not one of ask, deny, approve` };
			}
			out.approvals = value as ApprovalsMode;
			out.approvalsSource = `--approvals ${value}`;
		} else if (name === "--approval-timeout") {
			const seconds = Number(value);
			if (!/^\d+(\.\d+)?$/.test(value) || seconds <= 0 || seconds > MAX_APPROVAL_TIMEOUT_S) {
				const range = `a number of seconds in (0, ${MAX_APPROVAL_TIMEOUT_S}]`;
				return { ok: false, code: "bad_value", why: `--approval-timeout: '${value}' is not ${range}` };
			}
			out.approvalTimeoutMs = Math.round(seconds * 1000);
		} else if (name === "--approval-queue") {
			if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > MAX_APPROVAL_QUEUE) {
				return {
					ok: false,
					code: "bad_value",
					why: `--approval-queue: '${value}' is not a whole number in 1..${MAX_APPROVAL_QUEUE}`,
				};
			}
			out.approvalQueue = Number(value);
		} else {
			out.cwd = value;
		}
	}
	return { ok: true, value: out };
}
