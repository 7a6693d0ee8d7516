import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { BLOB_ERRORS, blobRefusal } from "../../../src/blob/parse.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import type { BlobMode } from "../../../src/config/tokens.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

describe("blobRefusal", () => {
	const table: Array<[BlobMode, string, boolean]> = [
		["write", "PUT", false],
		["read", "PUT", true],
		["off", "PUT", true],
		["write", "POST", false],
		["write", "GET", false],
		["write", "HEAD", false],
		["read", "POST", true],
		["read", "GET", false],
		["read", "HEAD", false],
		["off", "POST", true],
		["off", "GET", true],
		["off", "HEAD", true],
	];
	for (const [mode, method, refused] of table) {
		test(`${mode} ${method} -> ${refused ? "403" : "served"}`, () => {
			expect(blobRefusal(mode, method) !== null).toBe(refused);
		});
	}
	test("forbidden is 403 in the error table", () => {
		expect(BLOB_ERRORS.forbidden).toBe(403);
	});
});

describe("createBlobRoute with the switch", () => {
	let dir: string;
	let audits: AuditRecord[];
	beforeEach(() => {
		dir = mkdtempSync(join(tmpdir(), "a2a-blob-switch-"));
		audits = [];
		writeFileSync(join(dir, "f.txt"), "data");
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));
	const route = (mode: BlobMode) =>
		createBlobRoute({
			home: () => dir,
			cwd: () => dir,
			audit: r => audits.push(r),
			log: () => {},
			config: () => ({ blob: mode }),
		});
	const call = (mode: BlobMode, method: string, body?: string) =>
		route(mode).handle(
			new Request(`http://127.0.0.1:9/blob?path=g.txt`, { method, body: body ?? null }),
			routeCtx({ tokenName: "ci" }),
		);

	test("read: upload -> 403 {error, code: forbidden}, nothing written, audited with the token", async () => {
		const res = await call("read", "POST", "x");
		expect(res.status).toBe(403);
		expect(await res.json()).toEqual({
			error: '/blob is read-only on this host (config "blob": "read"): uploads (PUT, POST) are refused',
			code: "forbidden",
		});
		expect(existsSync(join(dir, "g.txt"))).toBe(false);
		expect(audits).toEqual([expect.objectContaining({ tool: "blob:write", tokenName: "ci", isError: true })]);
	});
	test("off: download -> 403 forbidden before the path is even looked at", async () => {
		const res = await route("off").handle(
			new Request("http://127.0.0.1:9/blob?path=f.txt"),
			routeCtx({ tokenName: "ci" }),
		);
		expect(res.status).toBe(403);
		expect(((await res.json()) as { code: string }).code).toBe("forbidden");
	});
	test("read: download still served", async () => {
		const res = await route("read").handle(
			new Request("http://127.0.0.1:9/blob?path=f.txt"),
			routeCtx({ tokenName: "ci" }),
		);
		expect(res.status).toBe(200);
		expect(await res.text()).toBe("data");
	});
});
