/**
 * Cancel on close (contract §13): in the 2026-07-28 era closing the response stream kills the
 * command and the audit says `cancelled: true`; in the 2025 eras a disconnect cancels nothing.
 * Each call runs an external `sleep` (the host shell has a builtin one) with a unique argument, so the
 * process table shows whether it is gone.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { modernPost, processesWith } from "../../helpers/modern.ts";
import { waitFor } from "../../helpers/wait.ts";

/** A sleep argument no other process has: `30.<12 digits>` seconds. */
const uniqueSleep = (): string => `30.${String(Math.random()).slice(2, 14).padEnd(12, "7")}`;

/** Waits for the call's start record and its `sleep` in the process table (bounded). */
const started = (host: Host, marker: string, secs: string) =>
	waitFor(
		`start record and process for ${marker}`,
		() => auditRecords(host, marker).some(r => r.phase === "start") && processesWith(secs).length > 0,
		{ timeoutMs: 15_000 },
	);

async function expectKilled(host: Host, marker: string, secs: string): Promise<Record<string, unknown>> {
	// Well before the 30 s sleep could end: the done record, and neither the shell nor its sleep left.
	const done = await waitFor(
		`cancelled done record for ${marker}`,
		() => auditRecords(host, marker).find(r => r.phase === "done"),
		{ timeoutMs: 10_000 },
	);
	await waitFor(`no process with ${secs}`, () => processesWith(secs).length === 0, { timeoutMs: 10_000 });
	expect(done.cancelled).toBe(true);
	expect(done.sid).toBeNull();
	expect(existsSync(join(host.cwd, marker))).toBe(false);
	return done;
}

describe("2026-07-28: closing the stream cancels the call", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("JSON request (no progress token): the client aborts -> command killed, audit cancelled:true", async () => {
		const marker = `close-json-${crypto.randomUUID()}`;
		const secs = uniqueSleep();
		const ac = new AbortController();
		const pending = modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command: `/bin/sh -c 'sleep ${secs}; touch ${marker}'` } },
			{ signal: ac.signal },
		).catch(e => e);
		await started(host, marker, secs);
		ac.abort();
		expect(await pending).toBeInstanceOf(Error);
		const done = await expectKilled(host, marker, secs);
		expect(done.client).toBe("raw-wire");
	}, 30_000);

	test("SSE request (progress token): the client closes the stream -> command killed, audit cancelled:true", async () => {
		const marker = `close-sse-${crypto.randomUUID()}`;
		const secs = uniqueSleep();
		const ac = new AbortController();
		const res = await modernPost(
			host,
			"tools/call",
			{
				name: "bash",
				arguments: { command: `/bin/sh -c 'sleep ${secs}; touch ${marker}'` },
				_meta: { progressToken: "c-1" },
			},
			{ signal: ac.signal },
		);
		expect(res.headers.get("content-type")).toStartWith("text/event-stream");
		const reader = res.body?.getReader();
		expect(new TextDecoder().decode((await reader?.read())?.value)).toContain(": stream open");
		await started(host, marker, secs);
		ac.abort();
		await reader?.cancel().catch(() => {});
		await expectKilled(host, marker, secs);
	}, 30_000);

	test("a call that finishes is not marked cancelled when its connection closes afterwards", async () => {
		const marker = `finish-${crypto.randomUUID()}`;
		const res = await modernPost(host, "tools/call", { name: "bash", arguments: { command: `echo ${marker}` } });
		expect(res.status).toBe(200);
		await res.text();
		const done = await waitFor("done record", () => auditRecords(host, marker).find(r => r.phase === "done"), {
			timeoutMs: 5000,
		});
		expect(done.cancelled).toBeUndefined();
	}, 30_000);

	test("2025 era: a client that disconnects does NOT cancel (the command runs to its end)", async () => {
		const sid = await (async () => {
			const res = await rpcPost(host, {
				jsonrpc: "2.0",
				id: 0,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
			});
			await res.text();
			return res.headers.get("mcp-session-id") ?? "";
		})();
		const marker = `legacy-stays-${crypto.randomUUID()}`;
		const secs = `1.${String(Math.random()).slice(2, 12)}`;
		const ac = new AbortController();
		const pending = fetch(host.url, {
			method: "POST",
			headers: host.headers({ "mcp-session-id": sid }),
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 7,
				method: "tools/call",
				params: { name: "bash", arguments: { command: `/bin/sh -c 'sleep ${secs}; touch ${marker}'` } },
			}),
			signal: ac.signal,
		}).catch(e => e);
		await started(host, marker, secs);
		ac.abort();
		await pending;
		const done = await waitFor("done record", () => auditRecords(host, marker).find(r => r.phase === "done"), {
			timeoutMs: 15_000,
		});
		expect(done.cancelled).toBeUndefined();
		expect(existsSync(join(host.cwd, marker))).toBe(true);
	}, 30_000);
});

describe("a cancelled call's approval prompt is closed", () => {
	let host: Host;
	useSharedHost({ args: ["--approval-mode", "always-ask"] }, h => ({ host } = h));

	test("2026-07-28: closing the stream while the host asks -> the host cancels its dialog; approving later runs nothing", async () => {
		const marker = `appr-modern-${crypto.randomUUID()}`;
		const ac = new AbortController();
		const pending = modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command: `touch ${marker}` } },
			{ signal: ac.signal },
		).catch(e => e);
		const prompt = await host.waitFrame(f => f.method === "select" && String(f.title).includes(marker));
		ac.abort();
		await pending;
		await host.waitFrame(f => f.method === "cancel" && f.targetId === prompt.id, 10_000);
		const done = await waitFor(
			"cancelled done record",
			() => auditRecords(host, marker).find(r => r.phase === "done"),
			{ timeoutMs: 10_000 },
		);
		expect(done.cancelled).toBe(true);
		host.send({ type: "extension_ui_response", id: prompt.id, value: "Approve" });
		const check = await modernPost(host, "tools/call", { name: "read", arguments: { path: host.cwd } });
		await check.text();
		expect(existsSync(join(host.cwd, marker))).toBe(false);
	}, 30_000);

	test("2025: notifications/cancelled while the host asks -> the dialog is cancelled too", async () => {
		const init = await rpcPost(host, {
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
		});
		await init.text();
		const sid = init.headers.get("mcp-session-id") ?? "";
		const marker = `appr-legacy-${crypto.randomUUID()}`;
		const pending = rpcPost(
			host,
			{
				jsonrpc: "2.0",
				id: 41,
				method: "tools/call",
				params: { name: "bash", arguments: { command: `touch ${marker}` } },
			},
			{ "mcp-session-id": sid },
		);
		const prompt = await host.waitFrame(f => f.method === "select" && String(f.title).includes(marker));
		const ack = await rpcPost(
			host,
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 41 } },
			{ "mcp-session-id": sid },
		);
		expect(ack.status).toBe(202);
		expect(((await (await pending).json()) as { error: { code: number } }).error.code).toBe(-32800);
		await host.waitFrame(f => f.method === "cancel" && f.targetId === prompt.id, 1000);
		expect(existsSync(join(host.cwd, marker))).toBe(false);
	}, 30_000);
});
