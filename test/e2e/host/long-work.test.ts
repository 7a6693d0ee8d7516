/**
 * Long builds and flashes with any client today (README "Long builds and flashes"): the host's own
 * `hub` tool supervises a process that outlives the client that started it. One client (the official
 * SDK) starts a job of about 60 s and goes away; the process is checked alive in /proc after that;
 * another client (another token, raw fetch) reads its whole log with the cursor and its exit status.
 * Also: `bash` with `async: true` through the bridge waits and returns the command's output.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, openSession, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { StoppableWork } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const OTHER = `other${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");
const LINES = 30;
const STEP_S = 2;

let host: Host;

/** One tools/call from the second client (token `other`, its own session), answered as text. */
async function hubAs(sid: string, args: Record<string, unknown>): Promise<string> {
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hub", arguments: args } },
		{ authorization: `Bearer ${OTHER}`, "mcp-session-id": sid },
	);
	const body = (await res.json()) as { result: { content: Array<{ text: string }>; isError: boolean } };
	expect(body.result.isError).toBe(false);
	return body.result.content.map(c => c.text).join("\n");
}

const text = (r: unknown): string => (r as { content: Array<{ text: string }> }).content.map(c => c.text).join("\n");

describe("long work: hub jobs outlive their client; bash async:true waits", () => {
	useSharedHost({ config: { tokens: [{ name: "other", token: OTHER }] } }, h => ({ host } = h));

	test("a ~60 s hub job started by one client runs on after it is gone; another client reads the whole log and the exit status", async () => {
		const name = `flash${String(Math.random()).slice(2, 8)}`;
		const script = `echo began $(date +%s); for i in $(seq 1 ${LINES}); do echo step $i; sleep ${STEP_S}; done; echo flashed $(date +%s); exit 7`;
		const a = new Client({ name: "starter", version: "0" });
		const transport = new StreamableHTTPClientTransport(new URL(host.url), {
			requestInit: { headers: { Authorization: `Bearer ${host.token}` } },
		});
		await a.connect(transport);
		const started = text(
			await a.callTool({
				name: "hub",
				arguments: { op: "start", name, application: "/bin/sh", args: ["-c", script], pty: false },
			}),
		);
		const pid = Number(/pid=(\d+)/.exec(started)?.[1]);
		expect(pid).toBeGreaterThan(0);
		const first = text(await a.callTool({ name: "hub", arguments: { op: "logs", name } }));
		const cursor = Number(/cursor=(\d+)/.exec(first)?.[1]);
		expect(Number.isInteger(cursor)).toBe(true);
		// The first client goes away: its session is deleted, its connection closed.
		await transport.terminateSession();
		await a.close();
		expect(existsSync(`/proc/${pid}`)).toBe(true);

		const other = await (async () => {
			const res = await rpcPost(
				host,
				{
					jsonrpc: "2.0",
					id: 0,
					method: "initialize",
					params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "reader", version: "0" } },
				},
				{ authorization: `Bearer ${OTHER}` },
			);
			await res.text();
			return res.headers.get("mcp-session-id") ?? "";
		})();
		expect(other).not.toBe("");
		// Still running a while after the starter left (checked again later by the exit status).
		expect(await hubAs(other, { op: "ps" })).toContain(`${name}: running pid=${pid}`);
		// `cursor` with `follow` is a long poll: it answers once the output has grown past it (logs are a tail).
		// Under load the first read can come before any step (only `began`): follow again until a step shows.
		const stepCount = (t: string) => t.split("\n").filter(l => l.startsWith("step ")).length;
		let newer = "";
		for (let at = cursor, polls = 0; stepCount(newer) === 0 && polls < 4; polls++) {
			const got = await hubAs(other, { op: "logs", name, cursor: at, follow: true, timeout: 10 });
			const next = Number(/cursor=(\d+)/.exec(got)?.[1]);
			expect(next).toBeGreaterThan(at);
			at = next;
			newer += got;
		}
		expect(stepCount(newer)).toBeGreaterThan(0);
		// Bounded poll for the exit: the job takes LINES * STEP_S = 60 s.
		const deadline = Date.now() + (LINES * STEP_S + 40) * 1000;
		for (;;) {
			const ps = await hubAs(other, { op: "ps" });
			if (ps.includes(`${name}: failed exit=7`)) break;
			if (Date.now() > deadline) throw new Error(`job did not end: ${ps}`);
			await Bun.sleep(1000);
		}
		expect(existsSync(`/proc/${pid}`)).toBe(false);
		const whole = await hubAs(other, { op: "logs", name, head: true, lines: 1000 });
		const steps = whole.split("\n").filter(l => /^step \d+$/.test(l));
		expect(steps).toEqual(Array.from({ length: LINES }, (_, i) => `step ${i + 1}`));
		// The job's own clock, from its log: it ran at least 60 s, well past its starter's exit.
		const began = Number(/^began (\d+)$/m.exec(whole)?.[1]);
		const ended = Number(/^flashed (\d+)$/m.exec(whole)?.[1]);
		expect(ended - began).toBeGreaterThanOrEqual(LINES * STEP_S);
		expect(whole).toContain(`[${name}: failed`);
	}, 150_000);

	test("bash with async:true through the bridge waits for the job and returns its output (not the host's 'backgrounded' stub)", async () => {
		const marker = `async-${crypto.randomUUID()}`;
		const sid = await openSession(host);
		const res = await rpcPost(
			host,
			{
				jsonrpc: "2.0",
				id: 3,
				method: "tools/call",
				params: { name: "bash", arguments: { command: `sleep 1; touch ${marker}; echo ${marker}`, async: true } },
			},
			{ "mcp-session-id": sid },
		);
		const body = (await res.json()) as { result: { content: Array<{ text: string }>; isError: boolean } };
		expect(body.result.isError).toBe(false);
		expect(body.result.content[0]?.text).toContain(marker);
		expect(body.result.content[0]?.text).not.toMatch(/background/i);
		// The command really ran before the answer: its marker file is there.
		expect(existsSync(join(host.cwd, marker))).toBe(true);
		const done = await waitFor("done record", () => auditRecords(host, marker).find(r => r.phase === "done"), {
			timeoutMs: 5000,
		});
		expect(done.isError).toBe(false);
	}, 60_000);
	test("a 2025 client that gave up: its call runs on (/proc) until its session ends, then is cancelled; the audit says abandoned", async () => {
		const work = new StoppableWork(host.cwd);
		const sid = await openSession(host);
		const gone = new AbortController();
		try {
			const request = fetch(new URL("/", host.url), {
				method: "POST",
				headers: host.headers({ "mcp-session-id": sid }),
				body: JSON.stringify({
					jsonrpc: "2.0",
					id: 9,
					method: "tools/call",
					params: { name: "bash", arguments: { command: work.command } },
				}),
				signal: gone.signal,
			}).catch(() => null);
			await work.running();
			gone.abort();
			await request;
			// Still running once the caller is gone: the 2025 eras do not cancel on a disconnect.
			const deadline = Date.now() + 20_000;
			let status = "";
			while (!status.includes("abandoned by its caller") && Date.now() < deadline) {
				const before = host.notifications().length;
				await host.command("/a2a");
				status =
					host
						.notifications()
						.slice(before)
						.find(m => m.startsWith("A2A bridge: http")) ?? "";
			}
			expect(status).toMatch(/bash \(\d+ s, abandoned by its caller/);
			expect(work.pids().length).toBeGreaterThan(0);
			const del = await fetch(host.url, { method: "DELETE", headers: host.headers({ "mcp-session-id": sid }) });
			expect(del.status).toBe(204);
			await work.stopped();
			const done = await waitFor("done record", () => auditRecords(host, work.marker).find(r => r.phase === "done"), {
				timeoutMs: 5000,
			});
			expect(done).toMatchObject({ abandoned: true, cancelled: true, isError: true });
		} finally {
			work.cleanup();
		}
	}, 60_000);
});
