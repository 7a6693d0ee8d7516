/**
 * Claims in the docs held to the files that decide them, so the next drift of each kind fails here rather than
 * in a reader's hands. Each describe names the kind of claim.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as log from "../../../src/audit/log.ts";
import * as record from "../../../src/audit/record.ts";
import * as redact from "../../../src/audit/redact.ts";
import * as refusals from "../../../src/audit/refusals.ts";
import * as auditFile from "../../../src/audit/rotate.ts";
import * as hashJobs from "../../../src/blob/hash-jobs.ts";
import * as blob from "../../../src/blob/parse.ts";
import * as staged from "../../../src/blob/staged.ts";
import * as config from "../../../src/config/config.ts";
import { FIELDS } from "../../../src/config/fields.ts";
import * as tokens from "../../../src/config/tokens.ts";
import * as calls from "../../../src/core/calls.ts";
import * as errors from "../../../src/core/errors.ts";
import * as facts from "../../../src/core/facts.ts";
import * as holdings from "../../../src/core/holdings.ts";
import * as idle from "../../../src/core/idle.ts";
import * as progress from "../../../src/core/progress.ts";
import * as sessions from "../../../src/core/sessions.ts";
import * as args from "../../../src/headless/args.ts";
import * as commands from "../../../src/host/commands.ts";
import * as hostLlm from "../../../src/takeover/route.ts";
import { ROOT } from "../../helpers/host.ts";

const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

interface LockEntry {
	engines?: { node?: string };
	os?: string[];
	hasInstallScript?: boolean;
	optional?: boolean;
}
const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(read("package.json")) as { allowScripts: Record<string, boolean> };
/** The locked packages npm installs on this platform (optional ones for other systems are skipped). */
const here = Object.entries(lock.packages).filter(([path, e]) => path && (!e.os || e.os.includes(process.platform)));
const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

describe("install output (README: what `npm install` prints)", () => {
	const section = (file: string, from: string, to: string) => {
		const text = read(file);
		return text.slice(text.indexOf(from), text.indexOf(to, text.indexOf(from)));
	};

	test("the EBADENGINE list is exactly the locked packages whose engines exclude the Node the README tested", () => {
		const tested = /\| Node \| ≥ 20 \(tested: (\d+\.\d+)\)/.exec(read("README.md"))?.[1];
		expect(tested).toBeDefined();
		const warned = here
			.filter(([, e]) => e.engines?.node && !Bun.semver.satisfies(`${tested}.0`, e.engines.node))
			.map(([path]) => nameOf(path))
			.sort();
		expect(warned.length).toBeGreaterThan(0);
		for (const [file, from, to] of [
			["README.md", "**What `npm install` prints**", "Node 22.13 or later"],
			["README_ZN.md", "**`npm install` 会打印什么**", "Node 22.13 或更新版本"],
		] as const) {
			const named = [...section(file, from, to).matchAll(/`([@a-z0-9/.-]+)`/g)]
				.map(m => m[1] ?? "")
				.filter(n => !["npm install", "npm test", "bun run --bun"].includes(n) && !n.startsWith("npm"));
			expect({ file, named: [...new Set(named)].sort() }).toEqual({ file, named: warned });
		}
		// Past every engines floor, nothing warns: the README's "Node 22.13 or later prints none".
		for (const [path, e] of here) {
			for (const node of ["22.13.0", "24.0.0"]) {
				if (e.engines?.node)
					expect({ path, node, ok: Bun.semver.satisfies(node, e.engines.node) }).toMatchObject({ ok: true });
			}
		}
	});

	test("allowScripts decides every locked install script: approved when installed here, denied when optional", () => {
		const scripted = Object.entries(lock.packages).filter(([path, e]) => path && e.hasInstallScript);
		expect(Object.keys(pkg.allowScripts).sort()).toEqual(scripted.map(([path]) => nameOf(path)).sort());
		for (const [path, e] of scripted)
			expect({ path, allowed: pkg.allowScripts[nameOf(path)] }).toEqual({ path, allowed: !e.optional });
		for (const file of ["README.md", "README_ZN.md"]) {
			const text = read(file);
			for (const name of Object.keys(pkg.allowScripts))
				expect({ file, name, named: text.includes(`\`${name}\``) }).toEqual({ file, name, named: true });
		}
	});
});

describe("CHANGELOG: released versions a user can read", () => {
	const log = read("CHANGELOG.md");
	const heads = [...log.matchAll(/^## (.*)$/gm)].map(m => m[1] ?? "");
	const released = heads
		.slice(1)
		.map(h => /^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2}) \(commit ([0-9a-f]{7,40})\)$/.exec(h));

	test("Unreleased on top, then each release as `[x.y.z] - date (commit abc1234)`, newest first; package.json is the newest", () => {
		expect(heads[0]).toBe("[Unreleased]");
		expect(released.length).toBeGreaterThanOrEqual(2);
		for (const [i, m] of released.entries()) expect({ head: heads[i + 1], ok: m !== null }).toMatchObject({ ok: true });
		const versions = released.map(m => m?.[1] ?? "");
		const dates = released.map(m => m?.[2] ?? "");
		for (let i = 1; i < versions.length; i++) {
			expect(Bun.semver.order(versions[i - 1] ?? "", versions[i] ?? "")).toBe(1);
			expect((dates[i - 1] ?? "") >= (dates[i] ?? "")).toBe(true);
		}
		const version = (JSON.parse(read("package.json")) as { version: string }).version;
		expect(version).toBe(versions[0] ?? "");
		const lockRoot = JSON.parse(read("package-lock.json")) as {
			version: string;
			packages: Record<string, { version?: string }>;
		};
		expect([lockRoot.version, lockRoot.packages[""]?.version]).toEqual([version, version]);
		// The initialize example shows the package version the bridge really sends.
		expect(read("docs/protocol.md")).toContain(`"serverInfo": { "name": "omp-a2a-bridge", "version": "${version}" }`);
	});

	test("each release names the commit a user pins it by, and that commit's package.json is that version", () => {
		for (const m of released) {
			const [, version, , commit] = m ?? [];
			const shown = Bun.spawnSync(["git", "-C", ROOT, "show", `${commit}:package.json`]);
			expect({ commit, found: shown.exitCode === 0 }).toEqual({ commit, found: true });
			expect({ commit, version: JSON.parse(shown.stdout.toString()).version }).toEqual({ commit, version });
		}
	});

	test("an entry of an older release whose behaviour a newer one changed says so", () => {
		// Each pair: a phrase of a released entry, and the newer change that contradicts it.
		const changed: Array<[string, string]> = [
			["a `start` and a `done` record per call", "coalesced `refused` record"],
			["sessions (64, 24 h idle) bound to the token", "its share of the 64 sessions"],
		];
		const sections = log.split(/^## /m).slice(2);
		for (const [phrase, note] of changed) {
			const older = sections.findIndex(s => s.includes(phrase));
			if (older < 0) continue;
			const entry = (sections[older] ?? "").split("\n").find(l => l.includes(phrase)) ?? "";
			expect({ entry, says: /Changed in \d+\.\d+\.\d+/.test(entry) && entry.includes(note) }).toMatchObject({
				says: true,
			});
		}
	});
});

/** Every Markdown file a reader gets: the READMEs and docs/ (the site's generated folders left out). */
const DOCS = [
	"README.md",
	"README_ZN.md",
	...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
		.filter(f => f.endsWith(".md") && !f.startsWith(".vitepress"))
		.map(f => `docs/${f}`),
];

/** The value of `const NAME = <number expression>` in a source file, for limits the code keeps private. */
function constIn(file: string, name: string): number {
	const m = new RegExp(`const ${name} = ([0-9_ *]+);`).exec(read(file));
	if (!m?.[1]) throw new Error(`${file}: no 'const ${name} = <number>'`);
	return m[1].split("*").reduce((n, f) => n * Number(f.trim().replace(/_/g, "")), 1);
}

describe("docs cite only what a reader can open", () => {
	test("no 'contract §N' (the design contract is not in the repository)", () => {
		const cited = DOCS.flatMap(f =>
			read(f)
				.split("\n")
				.map((l, i) => [`${f}:${i + 1}`, l] as const)
				.filter(([, l]) => /contract §\s*\d/.test(l)),
		);
		expect(cited).toEqual([]);
	});
});

describe("protocol.md ## Limits = the constants that hold them", () => {
	const md = read("docs/protocol.md");
	const table = md.slice(md.indexOf("\n## Limits\n")).split("\n\n")[1] ?? "";
	const rows = new Map(
		[...table.matchAll(/^\| (.+?) \| (.+) \|$/gm)].map(m => [m[1] ?? "", m[2] ?? ""] as const).slice(1),
	);
	const MiB = 1024 * 1024;
	const h = 3_600_000;
	const expected: Record<string, string[]> = {
		"MCP request body": [`${facts.MAX_BODY_BYTES / MiB} MiB`],
		sessions: [
			`${sessions.MAX_SESSIONS} live, ${sessions.SESSION_TTL_MS / h} h idle`,
			`per token ⌊${sessions.MAX_SESSIONS} / live tokens⌋`,
		],
		"calls in flight": [
			`${calls.MAX_CALLS_IN_FLIGHT} per process`,
			`per token ⌊${calls.MAX_CALLS_IN_FLIGHT} / live tokens⌋`,
		],
		"unread SSE events per stream": [`${progress.SSE_QUEUE_MAX_BYTES / 1024} KiB`],
		"`/blob` upload size": ["none but the disk"],
		"`/blob` uploads in flight": [
			`${blob.MAX_UPLOADS_IN_FLIGHT}, one per file`,
			`per token ⌊${blob.MAX_UPLOADS_IN_FLIGHT} / live tokens⌋`,
		],
		"`/blob` downloads holding a descriptor": [
			`${blob.MAX_DOWNLOADS_IN_FLIGHT}`,
			`per token ⌊${blob.MAX_DOWNLOADS_IN_FLIGHT} / live tokens⌋`,
		],
		"`/blob` whole-file hashes (`Want-Repr-Digest`)": [
			`${hashJobs.MAX_HASH_JOBS} at once, one per file version`,
			`per token ⌊${hashJobs.MAX_HASH_JOBS} / live tokens⌋`,
		],
		"`/blob` remembered whole-file digests": [`${constIn("src/blob/digest-cache.ts", "MAX_ENTRIES")}`],
		"`/blob` staging files (cut PUTs)": [
			`per directory: ${staged.STAGING_MAX_PER_DIR}, none older than ${constIn("src/blob/staged.ts", "STAGING_MAX_AGE_MS") / h} h`,
		],
		"`/blob` upload with no byte received": [`ends after ${constIn("src/blob/stall.ts", "BLOB_STALL_MS") / 1000} s`],
		"idle connection (no tool call or transfer running)": [`closed after ${idle.IDLE_TIMEOUT_S} s`],
		"`/host-llm` request body": [`${constIn("src/takeover/route.ts", "MAX_BODY_BYTES")} bytes`],
		"audit log": [
			`${log.AUDIT_MAX_BYTES / MiB} MiB per file, ${auditFile.AUDIT_GENERATIONS + 1} files`,
			`at most 2 records per token per ${refusals.REFUSAL_WINDOW_MS === 1000 ? "second" : `${refusals.REFUSAL_WINDOW_MS} ms`}`,
			`\`args\` ${redact.ARGS_MAX_CHARS} characters`,
			`string leaves and fields ${redact.LEAF_MAX_CHARS} characters`,
			`depth ${redact.MAX_DEPTH}`,
			`${record.RECORD_MAX_BYTES / 1024} KiB per record`,
		],
		"response time": ["no limit in the bridge"],
	};

	test("every row is checked, and no check lacks its row", () => {
		expect([...rows.keys()].sort()).toEqual(Object.keys(expected).sort());
	});

	for (const [row, parts] of Object.entries(expected)) {
		test(row, () => {
			for (const part of parts) expect(rows.get(row) ?? "").toContain(part);
		});
	}
});

describe("audit claims", () => {
	test("no doc says every call gets a start and a done record without naming the coalesced refusals", () => {
		const claims = DOCS.flatMap(f =>
			read(f)
				.split(/\n\s*\n/)
				.filter(
					p =>
						/`start` (and|record)[^.]*`done`|`start` 和一条 `done`/.test(p) &&
						/per call|every `tools\/call`|每次/i.test(p),
				)
				.filter(p => !/refused/.test(p))
				.map(p => `${f}: ${p.slice(0, 120)}`),
		);
		expect(claims).toEqual([]);
	});

	test("protocol.md's redaction order: the secret scrub first, as redactArgs does", () => {
		const md = read("docs/protocol.md");
		const list = md.slice(md.indexOf("**Redaction of `args`**")).split("\n\n")[1] ?? "";
		const steps = list.split(/\n(?=\d\. )/);
		expect(steps[0]).toContain("`<token>`");
		// The code: a secret inside a long string is scrubbed before the digest, so the digest is of the scrubbed text.
		const secret = "s".repeat(40);
		const long = `${secret}${"x".repeat(200)}`;
		const scrubbed = long.replaceAll(secret, "<token>");
		const out = redact.redactArgs({ a: long }, t => t.replaceAll(secret, "<token>"));
		expect(out).toBe(JSON.stringify({ a: redact.digestString(scrubbed) }));
	});

	test("the era table's audit `client` row: both eras record the client's name", () => {
		const md = read("docs/protocol.md");
		const row = /^\| audit `sid` \/ `client` \|(.*)\|(.*)\|$/m.exec(md);
		expect(row).not.toBeNull();
		for (const cell of [row?.[1] ?? "", row?.[2] ?? ""]) expect(cell).toContain("`clientInfo` name");
	});

	test("the hung-call recipe ignores refused and /blob records (it needs a start)", () => {
		const usage = read("docs/usage.md");
		expect(usage).toContain('select(any(.phase == "start") and all(.phase != "done"))');
	});
});

describe("clients' timeouts and long work", () => {
	test("one table of per-call timeouts (the client page's); the READMEs link it instead of copying rows", () => {
		const homes = DOCS.filter(f => /\| (client|客户端) \| (default per call|每次调用的默认值) \|/.test(read(f)));
		expect(homes).toEqual(["docs/guide/clients.md", "docs/zh/guide/clients.md"].filter(f => homes.includes(f)));
		expect(homes).toContain("docs/guide/clients.md");
		expect(read("README.md")).toContain("docs/guide/clients.md#timeouts-and-long-calls");
		expect(read("README_ZN.md")).toContain("docs/zh/guide/clients.md#超时与长时间调用");
	});

	test("no page says a call simply runs on after its client's timeout: each says what the era does", () => {
		for (const f of DOCS) {
			for (const p of read(f).split(/\n\s*\n/)) {
				if (!/runs on in the host|仍在宿主中继续运行/.test(p)) continue;
				expect({ f, p: p.slice(0, 160), era: /2026-07-28/.test(p) && /2025/.test(p) }).toMatchObject({ era: true });
			}
		}
	});

	test("every `ssh -L` forwards to the host's printed port, never a guessed one", () => {
		for (const f of DOCS) {
			for (const m of read(f).matchAll(/ssh -L \d+:127\.0\.0\.1:(\S+)/g))
				expect({ f, remote: m[1] }).toMatchObject({ remote: expect.stringMatching(/^<port/) });
		}
	});
});

describe("the errors page (both languages) = the error tables", () => {
	// A sentence's length as a reader sees it: a Chinese character takes two columns, as in a terminal.
	const columns = (cell: string | undefined): number => Bun.stringWidth(cell ?? "");
	/** The rows of the table right under `heading` in `file`: cells trimmed, backticks dropped. */
	function table(file: string, heading: string): string[][] {
		const text = read(file);
		const at = text.indexOf(`\n${heading}\n`);
		if (at < 0) throw new Error(`${file}: no '${heading}'`);
		const rest = text.slice(at + heading.length + 2);
		const start = rest.indexOf("\n|") + 1;
		return rest
			.slice(start)
			.split("\n\n")[0]
			?.split("\n")
			.slice(2)
			.map(l =>
				l
					.slice(1, -1)
					.split(" | ")
					.map(c => c.trim().replace(/^`|`$/g, "")),
			) as string[][];
	}

	for (const [file, mcp, blobH, llm] of [
		["docs/guide/errors.md", "## MCP errors", "## `/blob` errors", "## `/host-llm` errors"],
		["docs/zh/guide/errors.md", "## MCP 错误", "## `/blob` 错误", "## `/host-llm` 错误"],
	] as const) {
		test(`${file}: every ERRORS row with its status, code and message, each with a cause and a remedy`, () => {
			const rows = table(file, mcp);
			expect(rows.map(r => r[0])).toEqual(Object.keys(errors.ERRORS));
			for (const [kind = "", status, code, message, cause, remedy] of rows) {
				const row = errors.ERRORS[kind as keyof typeof errors.ERRORS];
				expect({ kind, status, code, message }).toEqual({
					kind,
					status: String(row.status),
					code: String(row.code),
					message: row.message,
				});
				expect({ kind, cause: columns(cause) > 10, remedy: columns(remedy) > 3 }).toEqual({
					kind,
					cause: true,
					remedy: true,
				});
			}
		});

		test(`${file}: every /blob and /host-llm code with its status`, () => {
			for (const [heading, codes] of [
				[blobH, blob.BLOB_ERRORS],
				[llm, hostLlm.HOST_LLM_ERRORS],
			] as const) {
				const rows = table(file, heading);
				expect(Object.fromEntries(rows.map(r => [r[0], Number(r[1])]))).toEqual({ ...codes });
				expect(rows.map(r => r[0])).toEqual(Object.keys(codes));
				for (const r of rows) expect(columns(r[2]) > 5 && columns(r[3]) > 3).toBe(true);
			}
		});
	}
});

describe("the environment page = the variables the code reads", () => {
	/** Every `process.env.X`, `Bun.env.X` and `env.X` (a parameter defaulting to process.env) in shipped code. */
	const read_ = (dir: string): string[] =>
		readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
			.filter(f => f.endsWith(".ts"))
			.flatMap(f => [
				...read(`${dir}/${f}`).matchAll(
					/\b(?:process\.env|Bun\.env)\.([A-Za-z_][A-Za-z0-9_]*)|\benv\.([A-Z][A-Z0-9_]*)\b/g,
				),
			])
			.map(m => m[1] ?? m[2] ?? "");
	const names = [...new Set([...read_("src"), ...read_("extensions"), ...read_("scripts")])].sort();
	const page = read("docs/guide/environment.md");
	const testOnly = read("docs/testing.md").slice(read("docs/testing.md").indexOf("## Test-only environment variables"));

	test("each is on the page or in testing.md's test-only table", () => {
		expect(names.length).toBeGreaterThan(5);
		expect(names.filter(n => !page.includes(`\`${n}\``) && !testOnly.includes(`\`${n}\``))).toEqual([]);
	});

	test("each A2A_ variable on the page is read by the code, and the Chinese page lists the same", () => {
		const listed = [...page.matchAll(/^\| `(A2A_[A-Z_]+)`/gm)].map(m => m[1]);
		expect(listed.filter(n => !names.includes(n ?? ""))).toEqual([]);
		const zh = [...read("docs/zh/guide/environment.md").matchAll(/^\| `(A2A_[A-Z_]+)`/gm)].map(m => m[1]);
		expect(zh).toEqual(listed);
	});
});

describe("the README's configuration table (both languages) = the validator's field table", () => {
	for (const file of ["README.md", "README_ZN.md"]) {
		test(`${file}: one row per field of FIELDS, with the defaults and bounds the code uses`, () => {
			const text = read(file);
			const rows = new Map(
				[...text.matchAll(/^\| `([$a-z_]+)` \| (.*) \|$/gm)]
					.filter(m => (m[1] ?? "") in FIELDS)
					.map(m => [m[1] ?? "", m[2] ?? ""] as const),
			);
			expect([...rows.keys()].sort()).toEqual(Object.keys(FIELDS).sort());
			expect(rows.get("host")).toContain(`\`${config.CONFIG_DEFAULTS.host}\``);
			expect(rows.get("blob")).toContain(`"${config.CONFIG_DEFAULTS.blob}"`);
			expect(rows.get("tokens")).toContain(`${tokens.MAX_NAMED_TOKENS}`);
			const pattern = JSON.stringify(config.configSchema()).match(/\{(\d+),\}/)?.[1];
			expect(rows.get("token")).toContain(`${pattern}`);
			expect(rows.get("port")).toContain("65535");
		});
	}
});

describe("command and option tables = the code's lists", () => {
	test("the README's /a2a table (both languages) has exactly the commands the host's usage line names", () => {
		const named = commands.TOKENS_USAGE.replace(/^use /, "").split(", ");
		for (const file of ["README.md", "README_ZN.md"]) {
			const rows = [...read(file).matchAll(/^\| `(\/a2a[^`]*)` \|/gm)].map(m => m[1]);
			expect({ file, rows }).toEqual({ file, rows: named });
		}
	});

	test("usage.md's --approvals table: the three modes and the default approval timeout", () => {
		const usage = read("docs/usage.md");
		const rows = [...usage.matchAll(/^\| `(ask|deny|approve)` /gm)].map(m => m[1]);
		expect(rows).toEqual(["ask", "deny", "approve"]);
		expect(usage).toContain(`Deny after \`--approval-timeout\` s (${args.DEFAULT_APPROVAL_TIMEOUT_MS / 1000})`);
	});
});

describe("the docs audit of 2026-12-03, held where a file decides the claim", () => {
	const testing = read("docs/testing.md");
	const WORDS = ["zero", "one", "two", "three", "four", "five", "six"];

	test("testing.md: the files that run last, alone, are the runner's ALONE set", () => {
		const set = /const ALONE = new Set\(\[([\s\S]*?)\]\)/.exec(read("scripts/test-parallel.ts"))?.[1] ?? "";
		const files = [...set.matchAll(/"test\/e2e\/(?:core\/)?([^"]+)"/g)].map(m => m[1] ?? "");
		expect(files.length).toBeGreaterThan(2);
		const para = testing.slice(testing.indexOf("files run last, one at a time"));
		const count = /(\w+) files run last, one at a time/.exec(testing)?.[1]?.toLowerCase();
		expect(count).toBe(WORDS[files.length]);
		// Named by its path under test/e2e/ or any shorter tail of it (`headless/demo.test.ts` as `demo.test.ts`).
		const named = (f: string) =>
			f.split("/").some((_, i, p) => para.slice(0, 900).includes(`\`${p.slice(i).join("/")}\``));
		for (const f of files) expect({ f, named: named(f) }).toEqual({ f, named: true });
	});

	test("testing.md: the timers check's timeout and call length are the script's", () => {
		const timers = "test/clients/timers.check.ts";
		expect(testing).toContain(`per-call timeout to ${constIn(timers, "TIMER_S")} s`);
		expect(testing).toContain(`makes a ${constIn(timers, "CALL_S")} s call`);
	});

	test("testing.md: the conformance suite's version is the pinned one, and both suite files are named", () => {
		const pinned = (JSON.parse(read("package.json")) as { devDependencies: Record<string, string> }).devDependencies;
		expect(testing).toContain(`\`@modelcontextprotocol/conformance\` ${pinned["@modelcontextprotocol/conformance"]}`);
		for (const f of ["conformance.test.ts", "conformance-2026.test.ts"])
			expect(testing).toContain(`test/e2e/core/${f}`);
	});

	test("testing.md's npm pack list names every shipped file that is not code", () => {
		const files = (JSON.parse(read("package.json")) as { files: string[] }).files;
		const list = testing.slice(
			testing.indexOf("`npm pack` would ship"),
			testing.indexOf("`npm pack` would ship") + 400,
		);
		for (const f of files.filter(f => !/^(src|extensions|scripts)\//.test(f)))
			expect({ f, named: list.includes(f === "schema/" ? "schema/a2a-bridge.schema.json" : f) }).toEqual({
				f,
				named: true,
			});
	});

	test("npm test's prerequisites: in both quick starts and in testing.md's setup, then the line that installs them", () => {
		/** The prose from `npm test`'s first mention up to the install line, and the install line itself. */
		const parts = (text: string) => {
			const at = text.indexOf("apt-get install ");
			return [text.slice(text.lastIndexOf("`npm test`", at), at), text.slice(at, text.indexOf("`", at))];
		};
		for (const file of ["README.md", "README_ZN.md", "docs/testing.md"]) {
			const [prose = "", line = ""] = parts(read(file));
			for (const need of [
				"root",
				"`git http-backend`",
				"util-linux",
				"`setsid",
				"`script`",
				"curl",
				"openssl",
				"jq",
				"`venv`",
				"pip",
			])
				expect({ file, need, named: prose.includes(need) }).toEqual({ file, need, named: true });
			expect(line.trim().split(" ").slice(2).sort()).toEqual(
				["git", "util-linux", "curl", "openssl", "jq", "python3-venv", "python3-pip"].sort(),
			);
		}
	});

	test("architecture.md names every script, and the scripts the package ships are package.json's", () => {
		const arch = read("docs/architecture.md");
		const missing = readdirSync(join(ROOT, "scripts")).filter(
			f => !arch.includes(`\`${f}\``) && !arch.includes(`scripts/${f}`),
		);
		expect(missing).toEqual([]);
		const shipped = (JSON.parse(read("package.json")) as { files: string[] }).files
			.filter(f => f.startsWith("scripts/"))
			.map(f => `\`${f.slice("scripts/".length)}\``);
		const para = arch.slice(
			arch.indexOf("The package ships all of `src/`"),
			arch.indexOf("The other scripts sit beside"),
		);
		expect([...new Set([...para.matchAll(/`[a-z-]+\.ts`/g)].map(m => m[0]))].sort()).toEqual(shipped.sort());
	});

	test("performance.md's list of replaced bench files: each gone, and every gone file the old runs name is listed", () => {
		const perf = read("docs/performance.md");
		const old = perf.slice(perf.indexOf("## Earlier runs"));
		const list = /the files they name \(([^)]*)\)/.exec(old.replace(/\n/g, " "))?.[1] ?? "";
		const listed = [...list.matchAll(/bench\/[\w.-]+\.ts/g)].map(m => m[0]);
		const here = new Set(readdirSync(join(ROOT, "bench")).map(f => `bench/${f}`));
		expect(listed.filter(f => here.has(f))).toEqual([]);
		const gone = [...new Set([...old.matchAll(/bench\/[\w.-]+\.ts/g)].map(m => m[0]))].filter(f => !here.has(f));
		expect(gone.filter(f => !listed.includes(f))).toEqual([]);
	});

	test("the config name rule: README and README_ZN state the validator's first-character rule", () => {
		expect(read("src/config/fields.ts")).toContain("starting with a letter or digit");
		expect(read("README.md")).toMatch(/^\| `name` \| 1–48 of `A-Z a-z 0-9 _ -`, starting with a letter or a digit,/m);
		expect(read("README_ZN.md")).toMatch(/^\| `name` \| 1–48 个 `A-Z a-z 0-9 _ -` 字符，以字母或数字开头，/m);
	});

	test("SSE is chosen by every Accept type the docs name, and the docs name every type that chooses it", () => {
		const named = ["text/event-stream", "*/*", "text/*"];
		for (const t of named) expect({ t, sse: progress.acceptsEventStream(t) }).toEqual({ t, sse: true });
		expect(progress.acceptsEventStream("application/json")).toBe(false);
		const md = read("docs/protocol.md");
		const bullet = md.slice(md.indexOf("- **SSE**:"), md.indexOf("- **SSE**:") + 300);
		for (const t of named) expect({ t, named: bullet.includes(`\`${t}\``) }).toEqual({ t, named: true });
		for (const f of ["README.md", "README_ZN.md"]) for (const t of named) expect(read(f)).toContain(`\`${t}\``);
	});

	test("protocol.md: the task statusMessage tail, the 404 body and every per-token share as reserved plus a pool", () => {
		const md = read("docs/protocol.md");
		expect(md).toContain(`\`…\` and the last ${constIn("src/core/tasks.ts", "STATUS_MESSAGE_MAX_CHARS")} characters`);
		expect(md).toContain("`not found\\n`");
		expect(read("src/core/errors.ts")).toContain('new Response("not found\\n"');
		// The share rule (issue 38): ⌊N / live⌋ reserved each, the rest one shared pool, never more than N in all.
		for (const [total, live] of [
			[4, 5],
			[64, 3],
			[256, 1],
		] as const) {
			const { each, pool } = holdings.shareOf(total, live);
			expect(each * live + pool).toBe(total);
		}
		for (const m of md.matchAll(/⌊\d+ \/ live tokens⌋[^.|]*/g))
			expect({ share: m[0].slice(0, 60), pooled: /reserved/.test(m[0]) }).toMatchObject({ pooled: true });
	});

	test("CHANGELOG's Unreleased bench entries give the rounds the bench takes by default", () => {
		const rounds = /BENCH_ROUNDS \?\? (\d+)/.exec(read("bench/table.ts"))?.[1];
		const unreleased = read("CHANGELOG.md").split(/^## /m)[1] ?? "";
		expect(unreleased).toContain(`takes ${rounds} rounds by default`);
		expect(unreleased).not.toMatch(/median of \d+ interleaved rounds/);
	});
});
