/**
 * The error tables in docs/protocol.md are the code's tables (issue 19 item 7): each Markdown table is
 * parsed and compared with its source both ways, so a row added, dropped or changed on one side fails.
 */
import { describe, expect, test } from "bun:test";
import { BLOB_ERRORS } from "../../../src/blob/parse.ts";
import { ERRORS, routeError, rpcError } from "../../../src/core/errors.ts";
import { NO_CONNECTION } from "../../../src/core/idle.ts";
import { createHostLlmRoute, HOST_LLM_ERRORS } from "../../../src/takeover/route.ts";
import type { Takeover } from "../../../src/takeover/takeover.ts";
import { markdownTable } from "../../helpers/docs.ts";

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

describe("docs/protocol.md /blob ### Errors = BLOB_ERRORS in src/blob/parse.ts", () => {
	const rows = markdownTable(PROTOCOL, "## Raw bytes: /blob", "code");
	const documented = new Map(rows.map(r => [code(r.code), Number(r.HTTP)]));

	test("the same codes with the same statuses, both ways", () => {
		expect(documented.size).toBe(rows.length);
		expect(Object.fromEntries(documented)).toEqual({ ...BLOB_ERRORS });
	});
});

describe("docs/protocol.md /host-llm refusals = what createHostLlmRoute answers", () => {
	const rows = markdownTable(PROTOCOL, "## Host inference switch: /host-llm", "request");
	/** `409 {... "code": "cannot_arm"}` → ["cannot_arm", 409]. */
	const documented = rows.flatMap(r => {
		const m = /^(\d{3}) .*"code": "([a-z_]+)"/.exec(r.answer ?? "");
		return m ? [[m[2], Number(m[1])] as const] : [];
	});
	const state = { enabled: true, denied: 0, degraded: false };
	const takeover = {
		state: () => state,
		toggle: () => ({ ok: false, code: "cannot_arm", message: "a transport the switch cannot cover" }),
	} as unknown as Takeover;
	const route = createHostLlmRoute(takeover);
	const post = (body: string) =>
		route.handle(new Request("http://127.0.0.1/host-llm", { method: "POST", body }), {
			sid: null,
			tokenName: "owner",
			client: null,
			conn: NO_CONNECTION,
		});

	test("every refusal the route gives is a documented row, and every documented row is given", async () => {
		const answers = await Promise.all(
			["x".repeat(1025), "not json", '{"enabled": "no"}', "[]", '{"enabled": false}'].map(post),
		);
		const given = new Map<string, number>();
		for (const res of answers) given.set(((await res.json()) as { code: string }).code, res.status);
		expect(Object.fromEntries(given)).toEqual(Object.fromEntries(documented));
		expect(Object.fromEntries(given)).toEqual({ ...HOST_LLM_ERRORS });
	});
});
