/**
 * The `/blob` switch against the real host (contract §14): `"off"` refuses every method with 403
 * `{code: "forbidden"}`, audited with the caller's token; a malformed value stops the bridge, not omp.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { withHost } from "../../helpers/host.ts";

describe("/blob switch (real host)", () => {
	test('"off" -> GET, HEAD, PUT and POST all 403 forbidden; nothing written; each refusal audited with the token', async () => {
		await withHost({ config: { blob: "off" } }, async h => {
			writeFileSync(join(h.cwd, "kept.txt"), "kept");
			const url = new URL("/blob?path=kept.txt", h.url);
			const auth = { authorization: `Bearer ${h.token}` };
			for (const method of ["GET", "HEAD", "PUT", "POST"]) {
				const body = method === "PUT" || method === "POST" ? { body: "new" } : {};
				const res = await fetch(url, { method, headers: auth, ...body });
				expect(res.status).toBe(403);
				if (method !== "HEAD") expect(((await res.json()) as { code: string }).code).toBe("forbidden");
			}
			expect(readFileSync(join(h.cwd, "kept.txt"), "utf8")).toBe("kept");
			const records = auditRecords(h);
			expect(records.map(r => [r.tool, r.token, r.isError])).toEqual([
				["blob:read", "owner", true],
				["blob:read", "owner", true],
				["blob:write", "owner", true],
				["blob:write", "owner", true],
			]);
		});
	}, 60_000);

	test('"read" -> PUT and POST 403 forbidden (no staging file either), GET still served', async () => {
		await withHost({ config: { blob: "read" } }, async h => {
			writeFileSync(join(h.cwd, "kept.txt"), "kept");
			const url = new URL("/blob?path=kept.txt", h.url);
			const auth = { authorization: `Bearer ${h.token}` };
			for (const method of ["PUT", "POST"]) {
				const res = await fetch(url, { method, headers: auth, body: "new" });
				expect(res.status).toBe(403);
				expect(((await res.json()) as { code: string }).code).toBe("forbidden");
			}
			expect(readFileSync(join(h.cwd, "kept.txt"), "utf8")).toBe("kept");
			expect(readdirSync(h.cwd).filter(n => n.startsWith(".a2a-staging-"))).toEqual([]);
			expect(await (await fetch(url, { headers: auth })).text()).toBe("kept");
		});
	}, 60_000);

	test("a malformed value -> the bridge does not start, omp runs on, the message names 'blob'", async () => {
		await withHost({ config: { blob: "readonly" }, waitForPort: false }, async h => {
			const f = await h.waitFrame(
				x => x.type === "extension_ui_request" && String(x.message).startsWith("A2A bridge not started"),
				30_000,
			);
			expect(String(f.message)).toContain(`field 'blob' must be "write", "read" or "off"`);
			expect(h.proc.exitCode).toBe(null);
		});
	}, 60_000);
});
