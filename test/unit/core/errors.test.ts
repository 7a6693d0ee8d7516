/**
 * The error tables in docs/protocol.md are the code's tables (issue 19 item 7): each Markdown table is
 * parsed and compared with its source both ways, so a row added, dropped or changed on one side fails.
 * And the tables are all there is (issue 32 item 2): the product code is parsed for every place an
 * error is spelled, and each must be a table or the one builder of its table. Driven from the tables found
 * (issue 41 item 7): a new table without its protocol.md section, or a status handed to `routeRefusal` by hand, fails.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BLOB_ERRORS } from "../../../src/blob/parse.ts";
import { ERRORS, routeError, rpcError } from "../../../src/core/errors.ts";
import { MODERN_STATUS, modernStatus } from "../../../src/core/modern.ts";
import { serveRoute } from "../../../src/core/route-kit.ts";
import { createHostLlmRoute, HOST_LLM_ERRORS } from "../../../src/takeover/route.ts";
import type { Takeover } from "../../../src/takeover/takeover.ts";
import { markdownTable } from "../../helpers/docs.ts";
import { errorSites } from "../../helpers/error-sites.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

const PROTOCOL = "docs/protocol.md";
/** The first `code` span of a cell: `forbidden_host`, or the fixed part of a message cell. */
const code = (cell: string | undefined): string => /`([^`]*)`/.exec(cell ?? "")?.[1] ?? "";

describe("docs/protocol.md ## Errors = ERRORS in src/core/errors.ts", () => {
	const rows = markdownTable(PROTOCOL, "## Errors", "kind");
	const documented = new Map(rows.map(r => [code(r.kind), r]));

	test("the same kinds, each once, both ways", () => {
		expect(documented.size).toBe(rows.length);
		expect([...documented.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
	});

	for (const [kind, row] of Object.entries(ERRORS)) {
		test(`${kind}: HTTP ${row.status}, code ${row.code}, message '${row.message}'`, () => {
			const doc = documented.get(kind);
			expect(doc).toBeDefined();
			expect(Number(doc?.HTTP)).toBe(row.status);
			expect(Number(doc?.["JSON-RPC code"])).toBe(row.code);
			expect(code(doc?.message)).toBe(row.message);
		});
	}

	test("the 2026-07-28 HTTP column = the era's own statuses (MODERN_STATUS), both ways", () => {
		const documented = Object.fromEntries(
			rows.filter(r => (r["2026-07-28 HTTP"] ?? "") !== "").map(r => [code(r.kind), Number(r["2026-07-28 HTTP"])]),
		);
		expect(documented).toEqual({ ...MODERN_STATUS });
	});

	test("each row's Response carries what the table says (both shapes)", async () => {
		for (const [kind, row] of Object.entries(ERRORS) as Array<
			[keyof typeof ERRORS, (typeof ERRORS)[keyof typeof ERRORS]]
		>) {
			const rpc = rpcError(kind, 1);
			expect(rpc.status).toBe(row.status);
			expect(await rpc.json()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: row.code, message: row.message } });
			const route = routeError(kind);
			expect(route.status).toBe(row.status);
			expect(await route.json()).toEqual({ error: row.message, code: kind });
		}
	});
});

/** A documented row read as [code, HTTP status], or null for a row that is no refusal. */
type ReadRow = (row: Record<string, string>) => readonly [string, number] | null;

/**
 * Every error table of the code, by the name the scan below finds it under, with the protocol.md section that
 * documents it: a table found in the code and missing here fails, so a new table cannot go undocumented.
 */
const TABLES: Record<string, { table: Record<string, number>; heading: string; key: string; read: ReadRow }> = {
	"src/core/errors.ts#ERRORS": {
		table: Object.fromEntries(Object.entries(ERRORS).map(([kind, row]) => [kind, row.status])),
		heading: "## Errors",
		key: "kind",
		read: r => [code(r.kind), Number(r.HTTP)],
	},
	"src/blob/parse.ts#BLOB_ERRORS": {
		table: { ...BLOB_ERRORS },
		heading: "## Raw bytes: /blob",
		key: "code",
		read: r => [code(r.code), Number(r.HTTP)],
	},
	"src/takeover/route.ts#HOST_LLM_ERRORS": {
		table: { ...HOST_LLM_ERRORS },
		heading: "## Host inference switch: /host-llm",
		key: "request",
		// `409 {... "code": "cannot_arm"}` → ["cannot_arm", 409]; the rows that answer 200 are no refusal.
		read: r => {
			const m = /^(\d{3}) .*"code": "([a-z_]+)"/.exec(r.answer ?? "");
			return m ? [m[2] as string, Number(m[1])] : null;
		},
	},
};

describe("each error table = its section of docs/protocol.md, the same codes and statuses both ways", () => {
	for (const [where, t] of Object.entries(TABLES)) {
		test(`${where} = ${PROTOCOL} ${t.heading}`, () => {
			const pairs = markdownTable(PROTOCOL, t.heading, t.key).flatMap(r => {
				const pair = t.read(r);
				return pair === null ? [] : [pair];
			});
			const documented = Object.fromEntries(pairs);
			expect(Object.keys(documented).length, `${t.heading} lists a code twice`).toBe(pairs.length);
			expect(documented).toEqual(t.table);
		});
	}
});

describe("docs/protocol.md /host-llm refusals = what createHostLlmRoute answers", () => {
	const state = { enabled: true, denied: 0, degraded: false };
	const takeover = {
		state: () => state,
		toggle: () => ({ ok: false, code: "cannot_arm", why: "a transport the switch cannot cover" }),
	} as unknown as Takeover;
	const route = createHostLlmRoute(takeover);
	const post = (body: string) =>
		serveRoute(route, new Request("http://127.0.0.1/host-llm", { method: "POST", body }), routeCtx());

	test("every refusal the route gives is a documented row, and every documented row is given", async () => {
		const answers = await Promise.all(
			["x".repeat(1025), "not json", '{"enabled": "no"}', "[]", '{"enabled": false}'].map(post),
		);
		// A caller whose audit budget is spent (contract §19).
		const spent = createHostLlmRoute(takeover, () => 5000);
		const refusedByBudget = await serveRoute(
			spent,
			new Request("http://127.0.0.1/host-llm", { method: "POST", body: '{"enabled": false}' }),
			routeCtx(),
		);
		expect(refusedByBudget.headers.get("retry-after")).toBe("5");
		answers.push(refusedByBudget);
		const given = new Map<string, number>();
		for (const res of answers) given.set(((await res.json()) as { code: string }).code, res.status);
		expect(Object.fromEntries(given)).toEqual({ ...HOST_LLM_ERRORS });
	});
});

describe("every error the code can send comes from a table", () => {
	/** Where each kind of site may be, and why; anything else is an error spelled by hand. */
	const ALLOWED: Record<string, readonly string[]> = {
		// JSON-RPC codes are written once, in the rows of ERRORS.
		"rpc-code": ["src/core/errors.ts#ERRORS"],
		"code-number": ["src/core/errors.ts#ERRORS"],
		// 4xx/5xx statuses: the rows, the plain-text 404 of unknown paths, and the takeover's tripwire,
		// which answers the host's own model client in its provider's shape (no route of the bridge).
		"error-status": ["src/core/errors.ts#ERRORS", "src/core/errors.ts#notFound", "src/takeover/plan.ts#wrapper"],
		// A JSON-RPC `error` object is built by `errorObject` alone; the tripwire's is the provider's shape.
		"error-object": ["src/takeover/plan.ts#createTripwire"],
		// `{error, code}` bodies of every route, its table's refusals and the pipeline's rows alike: one envelope.
		"error-body": ["src/core/errors.ts#routeRefusal"],
		// Any status goes into the envelope builder: only a route's table (through its kit) and the pipeline's rows call it.
		"refusal-call": ["src/core/route-kit.ts#refusalsOf", "src/core/errors.ts#routeError"],
		table: Object.keys(TABLES),
	};
	const sites = errorSites();

	test("no JSON-RPC code, error object, error body or error status is written outside its table and builder", () => {
		const stray = sites
			.filter(s => !ALLOWED[s.kind]?.includes(s.where))
			.map(s => `${s.kind} ${s.where}:${s.line} ${s.text}`);
		expect(stray).toEqual([]);
	});

	test("every error table of the code is one this file holds to docs/protocol.md", () => {
		expect(sites.filter(s => s.kind === "table").map(s => s.where)).toEqual(Object.keys(TABLES).sort());
	});

	test("the scan sees a hand-written error: a planted one in a copy of the tree is found", () => {
		const planted = "error: { code: -32603, message: 'internal error' }";
		const found = errorSitesOf(`export const f = () => ({ jsonrpc: "2.0", id: 1, ${planted} });`);
		expect(found.sort()).toEqual(["code-number", "error-object", "rpc-code"]);
	});

	test("a direct call of the envelope builder with a status of its own is found", () => {
		const found = errorSitesOf('export const teapot = () => routeRefusal(418, "teapot", "short and stout");');
		expect(found).toEqual(["refusal-call"]);
	});
});

/** The kinds of site the scanner reports for one product file's text (in a throwaway tree). */
function errorSitesOf(text: string): string[] {
	const root = mkdtempSync(join(tmpdir(), "error-sites-"));
	try {
		mkdirSync(join(root, "src"));
		mkdirSync(join(root, "extensions"));
		writeFileSync(join(root, "src", "x.ts"), text);
		return errorSites(root).map(s => s.kind);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

describe("the 2026-07-28 status is the era's rule, not a list (issue 41 item 4)", () => {
	test("a row answered 200 in 2025 with -32602 is 400 there, with -32601 404; other rows keep their status", () => {
		const rows = {
			prompt_not_found: { status: 200, code: -32602 },
			tool_gone: { status: 200, code: -32601 },
			busy: { status: 200, code: -32000 },
			already_http: { status: 400, code: -32602 },
		};
		expect(modernStatus(rows)).toEqual({ prompt_not_found: 400, tool_gone: 404 });
		expect(modernStatus(ERRORS)).toEqual({ ...MODERN_STATUS });
	});
});
