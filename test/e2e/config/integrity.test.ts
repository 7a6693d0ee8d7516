/**
 * Issue 30 (contract §19) for the bridge's own files, against the real host: hand edits of the config apply
 * exactly as written. Each claim is checked through a second channel: the raw HTTP status a secret gets,
 * the audit record's token name, the file on disk.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, openSession, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const A = `a-${"1".repeat(40)}`;
const B = `b-${"2".repeat(40)}`;

let host: Host;
useSharedHost(
	{
		config: {
			tokens: [
				{ name: "alpha", token: A },
				{ name: "beta", token: B },
			],
		},
	},
	h => ({ host } = h),
);

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** A fresh initialize with `secret`: 200 when it is live, 401 when not. */
async function initStatus(secret: string): Promise<number> {
	const res = await rpcPost(
		host,
		{
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "edit-test", version: "0" } },
		},
		auth(secret),
	);
	await res.text();
	return res.status;
}

const ping = async (secret: string, sid: string) =>
	(await rpcPost(host, { jsonrpc: "2.0", id: 9, method: "ping" }, { ...auth(secret), "mcp-session-id": sid })).status;

/** Runs `echo marker` under `secret` and returns the token name its audit records carry. */
async function auditedAs(secret: string): Promise<unknown> {
	const sid = await openSession(host, "2025-11-25", { secret, client: "edit-test" });
	const marker = `edit-${crypto.randomUUID()}`;
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command: `echo ${marker}` } } },
		{ ...auth(secret), "mcp-session-id": sid },
	);
	expect(res.status).toBe(200);
	expect(JSON.stringify(await res.json())).toContain(marker);
	const records = await waitFor("the call's done record", () => {
		const r = auditRecords(host, marker);
		return r.some(x => x.phase === "done") ? r : undefined;
	});
	const names = [...new Set(records.map(r => r.token))];
	expect(names.length).toBe(1);
	return names[0];
}

/** Writes the config's token table by hand (as an editor would) and waits until the host says it applied it. */
async function handEdit(tokens: Array<{ name: string; token: string }>): Promise<void> {
	const before = host.notifications().length;
	const raw = JSON.parse(readFileSync(host.configPath, "utf8"));
	writeFileSync(host.configPath, JSON.stringify({ ...raw, tokens }, null, "\t"));
	await waitFor(
		"the edit applied",
		() =>
			host
				.notifications()
				.slice(before)
				.find(m => m.includes("config edit applied")),
		{
			timeoutMs: 10_000,
			seen: () => host.notifications().slice(before),
		},
	);
}

describe("issue 30 item 5: config edits apply as written (defect 7)", () => {
	test("a secret moved to another name, then the file restored -> each time exactly the file's table is live", async () => {
		const alphaSid = await openSession(host, "2025-11-25", { secret: A, client: "edit-test" });
		expect(await auditedAs(A)).toBe("alpha");

		// alpha's secret moves to beta; alpha and beta's old secret leave the table.
		await handEdit([{ name: "beta", token: A }]);
		expect(await initStatus(A)).toBe(200);
		expect(await initStatus(B)).toBe(401);
		expect(await ping(A, alphaSid)).not.toBe(200);
		expect(await auditedAs(A)).toBe("beta");

		// The file restored: both names back with their own secrets.
		await handEdit([
			{ name: "alpha", token: A },
			{ name: "beta", token: B },
		]);
		expect(await initStatus(A)).toBe(200);
		expect(await initStatus(B)).toBe(200);
		expect(await auditedAs(A)).toBe("alpha");
		expect(await auditedAs(B)).toBe("beta");

		// Two names swap their secrets.
		await handEdit([
			{ name: "alpha", token: B },
			{ name: "beta", token: A },
		]);
		expect(await auditedAs(A)).toBe("beta");
		expect(await auditedAs(B)).toBe("alpha");
		await handEdit([
			{ name: "alpha", token: A },
			{ name: "beta", token: B },
		]);
		expect(await auditedAs(A)).toBe("alpha");
	}, 90_000);
});
