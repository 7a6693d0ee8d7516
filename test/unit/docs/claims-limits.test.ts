/**
 * Claims of the docs' citations, protocol.md's Limits, the audit and the clients' timeouts, held to the code.
 * One of the claims tests: each docs claim held to the file that decides it, so the next drift fails here.
 */
import { describe, expect, test } from "bun:test";
import * as log from "../../../src/audit/log.ts";
import * as record from "../../../src/audit/record.ts";
import * as redact from "../../../src/audit/redact.ts";
import * as refusals from "../../../src/audit/refusals.ts";
import * as auditFile from "../../../src/audit/rotate.ts";
import * as hashJobs from "../../../src/blob/hash-jobs.ts";
import * as blob from "../../../src/blob/parse.ts";
import * as staged from "../../../src/blob/staged.ts";
import * as calls from "../../../src/core/calls.ts";
import * as facts from "../../../src/core/facts.ts";
import * as idle from "../../../src/core/idle.ts";
import * as progress from "../../../src/core/progress.ts";
import * as sessions from "../../../src/core/sessions.ts";
import { constIn, DOCS, read } from "../../helpers/claims.ts";

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
		"`/host-llm` request body": [`${constIn("src/takeover/route.ts", "MAX_TOGGLE_BYTES")} bytes`],
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
