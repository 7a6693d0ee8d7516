/**
 * `npm test`'s test step: the unit tests as one `bun test` process and each other test file as its
 * own, at most A2A_TEST_JOBS (default 4) at a time, slowest first. Each e2e file boots its own hosts in
 * its own throwaway HOME on its own port, so files are independent. A process gets a bound
 * (A2A_TEST_FILE_TIMEOUT_S, default 1200 s: the docs site build alone may take 10 min), then its process group is killed. Output is printed per
 * file as it ends; the last lines are one bun-style totals block (what .ci/run parses) and a plain line.
 *
 *   bun scripts/test-parallel.ts [--timeout <ms per test>] [file or directory ...]   (default: test)
 */
import { spawn } from "node:child_process";
import {
	closeSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const UNIT = "test/unit";
/** Measured durations of the last run, used to start the slowest files first (git-ignored). */
const TIMES = join(ROOT, ".tmp", "test-times.json");
/** Seconds per file from a parallel run on a loaded 2-core machine: the order when no measured times exist. */
const DEFAULT_SECONDS: Record<string, number> = {
	"test/e2e/site/site.test.ts": 400,
	"test/e2e/host/lifecycle.test.ts": 340,
	"test/e2e/core/long-calls.test.ts": 260,
	"test/e2e/takeover/takeover.test.ts": 240,
	"test/e2e/config/tokens.test.ts": 165,
	"test/e2e/package/install.test.ts": 145,
	"test/e2e/core/hardening.test.ts": 140,
	"test/e2e/headless/cli.test.ts": 120,
	"test/e2e/core/idle.test.ts": 120,
	"test/e2e/audit/audit.test.ts": 90,
	"test/e2e/package/docs.test.ts": 90,
	"test/e2e/lab/guide.test.ts": 90,
	"test/e2e/core/clients.test.ts": 70,
	"test/e2e/lab/session.test.ts": 60,
	"test/e2e/headless/demo-lab.test.ts": 50,
	"test/e2e/lab/boxes.test.ts": 30,
	"test/e2e/headless/demo.test.ts": 60,
	"test/e2e/headless/probe.test.ts": 60,
	"test/e2e/core/modern-cancel.test.ts": 50,
	[UNIT]: 15,
};

/**
 * Files that time the host itself and run last, one at a time, with nothing beside: a second omp that must
 * connect within its 250 ms start-up window (clients, demo, two boxes), and `npm run host`'s clean stop within omp's 6 s
 * exit grace (headless cli), which a machine busy with other hosts can miss.
 */
const ALONE = new Set([
	"test/e2e/core/clients.test.ts",
	"test/e2e/headless/demo.test.ts",
	"test/e2e/lab/boxes.test.ts",
	"test/e2e/headless/cli.test.ts",
]);

interface Job {
	name: string;
	paths: string[];
	weight: number;
}

interface Outcome {
	job: Job;
	pass: number;
	fail: number;
	skip: number;
	todo: number;
	expects: number;
	/** Why the process is counted as broken beyond its failed tests (crash, timeout, no summary). */
	broken: string | null;
	failures: string[];
	output: string;
	seconds: number;
}

function knob(name: string, fallback: number, max: number): number {
	const raw = process.env[name];
	if (raw === undefined || raw === "") return fallback;
	const n = Number(raw);
	if (!/^[0-9]+$/.test(raw) || n < 1 || n > max)
		throw new Error(`${name} must be an integer in [1, ${max}], got '${raw}'`);
	return n;
}

function testFiles(dir: string): string[] {
	const out: string[] = [];
	for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
		const rel = `${dir}/${entry.name}`;
		if (entry.isDirectory()) out.push(...testFiles(rel));
		else if (entry.name.endsWith(".test.ts")) out.push(rel);
	}
	return out.sort();
}

/** Unit tests stay one process (fast, no host); every other file is a job of its own. */
function plan(args: string[]): Job[] {
	let measured: Record<string, number> = {};
	try {
		measured = JSON.parse(readFileSync(TIMES, "utf8"));
	} catch {}
	const weight = (name: string) => measured[name] ?? DEFAULT_SECONDS[name] ?? 20;
	const unit: string[] = [];
	const jobs: Job[] = [];
	for (const arg of args) {
		const rel = relative(ROOT, resolve(arg)) || ".";
		if (rel.startsWith("..")) throw new Error(`${arg} is outside the repository`);
		const files = statSync(join(ROOT, rel)).isDirectory() ? testFiles(rel) : [rel];
		for (const f of files) {
			if (f.startsWith(`${UNIT}/`)) unit.push(f);
			else if (!jobs.some(j => j.name === f)) jobs.push({ name: f, paths: [f], weight: weight(f) });
		}
	}
	if (unit.length > 0) {
		const all = unit.length === testFiles(UNIT).length;
		jobs.push({ name: all ? UNIT : unit.join(" "), paths: all ? [UNIT] : unit, weight: weight(UNIT) });
	}
	return jobs.sort((a, b) => b.weight - a.weight);
}

const live = new Set<number>();
let fileTimeoutS = 1200;

function killGroup(pid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pid, signal);
	} catch {}
}

/** bun's own summary lines; they are restated once for all files at the end. */
const SUMMARY =
	/^ *(\d+) (pass|fail|skip|todo|expect\(\) calls)$|^Ran \d+ tests? across \d+ files?\.|^\d+ tests? failed:$/;

function parse(
	job: Job,
	output: string,
	code: number | null,
	signal: string | null,
	timedOut: boolean,
): Omit<Outcome, "seconds"> {
	const lines = output.split("\n");
	const count = (word: string) => {
		const hit = lines.findLast(l => new RegExp(`^ *\\d+ ${word}$`).test(l));
		return hit === undefined ? null : Number.parseInt(hit, 10);
	};
	const seen = (tag: string) => lines.filter(l => l.startsWith(`(${tag}) `)).length;
	const summary = { pass: count("pass"), fail: count("fail") };
	// bun repeats each failure in its closing recap; keep one line per failed test.
	const failures = [...new Set(lines.filter(l => l.startsWith("(fail) ")))].map(
		l => `(fail) ${job.name} > ${l.slice(7)}`,
	);
	let broken: string | null = null;
	if (timedOut) broken = `killed after ${fileTimeoutS} s (A2A_TEST_FILE_TIMEOUT_S)`;
	else if (summary.pass === null && summary.fail === null)
		broken = `ended (${signal ?? `exit ${code}`}) without bun's summary`;
	else if (code !== 0 && (summary.fail ?? 0) === 0) broken = `exit ${signal ?? code} with no failed test`;
	return {
		job,
		pass: summary.pass ?? seen("pass"),
		// A broken process counts as one failure more, so the totals can never read as green.
		fail: (summary.fail ?? seen("fail")) + (broken ? 1 : 0),
		skip: count("skip") ?? seen("skip"),
		todo: count("todo") ?? seen("todo"),
		expects: count("expect\\(\\) calls") ?? 0,
		broken,
		failures,
		output: lines
			.filter(l => !SUMMARY.test(l))
			.join("\n")
			.trimEnd(),
	};
}

function run(job: Job, timeoutMs: string, outDir: string): Promise<Outcome> {
	const log = join(outDir, `${job.name.replaceAll("/", "_")}.log`);
	const fd = openSync(log, "a");
	const started = performance.now();
	// Its own process group, so a timeout (or our own end) stops the hosts and commands it started too;
	// --no-orphans covers the one end we cannot handle, a SIGKILL of this runner.
	const child = spawn(
		process.execPath,
		["test", "--no-orphans", "--timeout", timeoutMs, ...job.paths.map(p => `./${p}`)],
		{
			cwd: ROOT,
			detached: true,
			stdio: ["ignore", fd, fd],
			env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
		},
	);
	closeSync(fd);
	const pid = child.pid ?? 0;
	live.add(pid);
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(pid, "SIGTERM");
		setTimeout(() => killGroup(pid, "SIGKILL"), 10_000).unref();
	}, fileTimeoutS * 1000);
	return new Promise(res => {
		child.on("exit", (code, signal) => {
			clearTimeout(timer);
			live.delete(pid);
			// Whatever the file left behind in its group (a stray host, a sleep) goes with it.
			killGroup(pid, "SIGKILL");
			const output = readFileSync(log, "utf8");
			res({ ...parse(job, output, code, signal, timedOut), seconds: (performance.now() - started) / 1000 });
		});
	});
}

function report(o: Outcome): void {
	const state = o.broken ? `BROKEN: ${o.broken}` : `${o.pass} pass, ${o.skip} skip, ${o.fail} fail`;
	console.log(`\n== ${o.job.name}: ${state} (${o.seconds.toFixed(1)} s)`);
	if (o.output) console.log(o.output);
}

async function main(): Promise<number> {
	const jobsMax = knob("A2A_TEST_JOBS", 4, 32);
	fileTimeoutS = knob("A2A_TEST_FILE_TIMEOUT_S", 1200, 86_400);
	const argv = process.argv.slice(2);
	let timeoutMs = "120000";
	const paths: string[] = [];
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--timeout") timeoutMs = argv[++i] ?? "";
		else paths.push(argv[i] as string);
	}
	if (!/^\d+$/.test(timeoutMs)) throw new Error(`--timeout needs a number of milliseconds, got '${timeoutMs}'`);
	const queue = plan(paths.length > 0 ? paths : ["test"]);
	if (queue.length === 0) throw new Error(`no test files under ${paths.join(" ")}`);
	const width = Math.min(jobsMax, queue.length);
	console.log(
		`== ${queue.length} test processes, ${width} at a time (A2A_TEST_JOBS), slowest first; alone at the end: ${[...ALONE].filter(n => queue.some(j => j.name === n)).join(", ") || "none"}`,
	);
	const outDir = mkdtempSync(join(tmpdir(), "a2a-test-run-"));
	const started = performance.now();
	const outcomes: Outcome[] = [];
	try {
		const runOne = async (job: Job) => {
			const o = await run(job, timeoutMs, outDir);
			outcomes.push(o);
			report(o);
		};
		const pending = queue.filter(j => !ALONE.has(j.name));
		await Promise.all(
			Array.from({ length: width }, async () => {
				for (let job = pending.shift(); job; job = pending.shift()) await runOne(job);
			}),
		);
		for (const job of queue.filter(j => ALONE.has(j.name))) await runOne(job);
	} finally {
		rmSync(outDir, { recursive: true, force: true });
	}
	const wall = (performance.now() - started) / 1000;
	const sum = (k: "pass" | "fail" | "skip" | "todo" | "expects") => outcomes.reduce((n, o) => n + o[k], 0);
	try {
		mkdirSync(join(ROOT, ".tmp"), { recursive: true });
		const prior = (() => {
			try {
				return JSON.parse(readFileSync(TIMES, "utf8")) as Record<string, number>;
			} catch {
				return {};
			}
		})();
		// Only the suite's own files (a run on fixtures, as runner.test.ts does, records nothing).
		const known = new Set([UNIT, ...testFiles("test")]);
		const fresh = outcomes.filter(o => !o.broken && known.has(o.job.name));
		for (const o of fresh) prior[o.job.name] = Math.round(o.seconds);
		if (fresh.length > 0) writeFileSync(TIMES, `${JSON.stringify(prior, null, "\t")}\n`);
	} catch {}
	const slowest = [...outcomes].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
	console.log(`\n== slowest: ${slowest.map(o => `${o.job.name} ${o.seconds.toFixed(0)} s`).join(", ")}`);
	const failures = outcomes.flatMap(o => o.failures);
	const broken = outcomes.filter(o => o.broken);
	if (failures.length + broken.length > 0) {
		console.log(`\n${failures.length} tests failed:`);
		for (const f of failures) console.log(f);
		for (const o of broken) console.log(`(fail) ${o.job.name}: ${o.broken}`);
	}
	console.log("");
	console.log(` ${sum("pass")} pass`);
	if (sum("skip") > 0) console.log(` ${sum("skip")} skip`);
	if (sum("todo") > 0) console.log(` ${sum("todo")} todo`);
	console.log(` ${sum("fail")} fail`);
	console.log(` ${sum("expects")} expect() calls`);
	const files = outcomes.reduce(
		(n, o) => n + (o.job.paths[0] === UNIT ? testFiles(UNIT).length : o.job.paths.length),
		0,
	);
	console.log(
		`Ran ${sum("pass") + sum("fail") + sum("skip") + sum("todo")} tests across ${files} files. [${wall.toFixed(2)}s]`,
	);
	console.log(`${sum("pass")} passed, ${sum("fail")} failed, ${sum("skip")} skipped`);
	return sum("fail") > 0 || broken.length > 0 ? 1 : 0;
}

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
	process.on(sig, () => {
		for (const pid of live) killGroup(pid, "SIGKILL");
		process.exit(130);
	});
}
main().then(
	code => process.exit(code),
	err => {
		console.error(`test-parallel: ${err instanceof Error ? err.message : String(err)}`);
		for (const pid of live) killGroup(pid, "SIGKILL");
		process.exit(2);
	},
);
