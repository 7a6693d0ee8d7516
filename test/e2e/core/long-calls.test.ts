/**
 * Long calls against the real host: progress over SSE, keep-alives, no idle cut, background-job
 * takeover, cancellation and the in-flight cap. The 75 s cases run in CI (marked in their names).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { modelsYml, startFakeModel } from "../../helpers/fake-model.ts";
import { callTool, Host, openSession, rawHttp, rpcPost, useSharedHost } from "../../helpers/host.ts";
import { StoppableWork } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const FAST_BACKGROUND = { ".omp/agent/config.yml": "bash:\n  autoBackground:\n    thresholdMs: 2000\n" };

async function sdkClient(host: Host): Promise<Client> {
	const client = new Client({ name: "long-calls", version: "0" });
	const transport = new StreamableHTTPClientTransport(new URL(host.url), {
		requestInit: { headers: { Authorization: `Bearer ${host.token}` } },
	});
	await client.connect(transport);
	return client;
}

interface SseRead {
	status: number;
	contentType: string | null;
	raw: string;
	events: Array<Record<string, unknown>>;
	endedAt: number;
}

/** POSTs a tools/call that asks for progress and reads the whole SSE body. */
async function sseCall(
	host: Host,
	sid: string,
	id: number,
	args: Record<string, unknown>,
	name = "bash",
	token: string | number = `tok-${id}`,
): Promise<SseRead> {
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: { progressToken: token } } },
		{ "mcp-session-id": sid, accept: "application/json, text/event-stream" },
	);
	const raw = await res.text();
	const events = raw
		.split("\n\n")
		.filter(b => b.startsWith("data: "))
		.map(b => JSON.parse(b.slice(6)) as Record<string, unknown>);
	return { status: res.status, contentType: res.headers.get("content-type"), raw, events, endedAt: Date.now() };
}

const cancel = (host: Host, sid: string, requestId: number) =>
	rpcPost(
		host,
		{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } },
		{ "mcp-session-id": sid },
	);

describe("progress and response modes", () => {
	let host: Host;
	let sid: string;
	useSharedHost({ session: true }, h => ({ host, sid } = h));

	test("SDK client: a line every 0.5 s for 10 s -> >= 10 progress notifications, the 5 s timeout never fires", async () => {
		const client = await sdkClient(host);
		try {
			const seen: Array<{ progress: number; message?: string }> = [];
			const r = await client.callTool(
				{ name: "bash", arguments: { command: "for i in $(seq 1 20); do echo line$i; sleep 0.5; done" } },
				undefined,
				{ onprogress: p => seen.push(p), timeout: 5000, resetTimeoutOnProgress: true },
			);
			expect(r.isError).toBe(false);
			expect(JSON.stringify(r.content)).toContain("line20");
			expect(seen.length).toBeGreaterThanOrEqual(10);
			for (let i = 1; i < seen.length; i++) expect(seen[i]?.progress).toBeGreaterThan(seen[i - 1]?.progress ?? 0);
			expect(seen.at(-1)?.message).toContain("line20");
		} finally {
			await client.close();
		}
	}, 60_000);

	test("without a progress token the call is answered with plain JSON", async () => {
		const res = await rpcPost(
			host,
			{ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "bash", arguments: { command: "echo plain" } } },
			{ "mcp-session-id": sid, accept: "application/json, text/event-stream" },
		);
		expect(res.headers.get("content-type")).toBe("application/json");
		expect(JSON.stringify(await res.json())).toContain("plain");
	}, 30_000);

	test("at most 4 notifications per second, the latest always delivered, messages <= 1 KiB, nothing after the response", async () => {
		const started = Date.now();
		const r = await sseCall(host, sid, 12, {
			command: "for i in $(seq 1 400); do echo $i-$(printf 'x%.0s' $(seq 1 40)); sleep 0.005; done; echo last-line",
		});
		const seconds = (r.endedAt - started) / 1000;
		expect(r.contentType).toBe("text/event-stream");
		const progress = r.events.filter(e => e.method === "notifications/progress");
		const values = progress.map(e => (e.params as { progress: number }).progress);
		expect(values).toEqual([...values].sort((a, b) => a - b));
		expect(new Set(values).size).toBe(values.length);
		expect(progress.length).toBeLessThanOrEqual(Math.ceil(seconds * 4) + 1);
		for (const e of progress)
			expect(Buffer.byteLength((e.params as { message: string }).message)).toBeLessThanOrEqual(1024);
		expect((progress.at(-1)?.params as { message?: string } | undefined)?.message).toContain("last-line");
		const last = r.events.at(-1) as { id?: number; result?: { isError: boolean } };
		expect(last.id).toBe(12);
		expect(last.result?.isError).toBe(false);
		expect(r.raw.trimEnd().endsWith("}")).toBe(true);
	}, 60_000);

	test("a silent tool gets a ': keepalive' comment every 15 s and is not cut", async () => {
		const r = await sseCall(host, sid, 13, { command: "sleep 17; echo woke" });
		expect(r.raw).toContain(": keepalive\n\n");
		expect(JSON.stringify(r.events.at(-1))).toContain("woke");
	}, 60_000);
});

describe("cancellation", () => {
	let host: Host;
	let sid: string;
	useSharedHost({ session: true }, h => ({ host, sid } = h));

	test("JSON request: notifications/cancelled -> -32800 at once, the process is killed, done has cancelled:true", async () => {
		const work = new StoppableWork(host.cwd);
		try {
			const pending = callTool(host, sid, "bash", { command: work.command }, 21);
			await work.running();
			const t0 = Date.now();
			const ack = await cancel(host, sid, 21);
			expect(ack.status).toBe(202);
			const r = await pending;
			expect(Date.now() - t0).toBeLessThan(1000);
			expect(r.body).toEqual({ jsonrpc: "2.0", id: 21, error: { code: -32800, message: "request cancelled" } });
			await work.stopped();
			const done = readFileSync(host.auditPath, "utf8")
				.split("\n")
				.filter(l => l.includes(work.marker) && l.includes('"phase":"done"'));
			expect(done.length).toBe(1);
			expect(JSON.parse(done[0] ?? "{}").cancelled).toBe(true);
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("SSE request: the stream ends without a response, the process is killed", async () => {
		const work = new StoppableWork(host.cwd);
		try {
			const pending = sseCall(host, sid, 22, { command: work.command });
			await work.running();
			await cancel(host, sid, 22);
			const r = await pending;
			expect(r.events.some(e => "result" in e || "error" in e)).toBe(false);
			await work.stopped();
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("DELETE of the session cancels its calls: answered -32800, the process is killed", async () => {
		const mine = await openSession(host);
		const work = new StoppableWork(host.cwd);
		try {
			const pending = callTool(host, mine, "bash", { command: work.command }, 23);
			await work.running();
			const del = await fetch(host.url, { method: "DELETE", headers: host.headers({ "mcp-session-id": mine }) });
			expect(del.status).toBe(204);
			expect((await pending).body.error).toEqual({ code: -32800, message: "request cancelled" });
			await work.stopped();
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("unknown and finished ids are ignored; a late cancel is harmless", async () => {
		expect((await cancel(host, sid, 99_999)).status).toBe(202);
		const r = await callTool(host, sid, "bash", { command: "echo finished" }, 24);
		expect(JSON.stringify(r.body)).toContain("finished");
		expect((await cancel(host, sid, 24)).status).toBe(202);
		const again = await callTool(host, sid, "bash", { command: "echo after" }, 25);
		expect(JSON.stringify(again.body)).toContain("after");
	}, 30_000);
});

describe("cancellation and the cap while waiting for approval", () => {
	let host: Host;
	let sid: string;
	// Every call of one token waits for its turn at the approver: the per-token bound raised to the cap.
	const env = { A2A_BRIDGE_APPROVAL_QUEUE: "256" };
	useSharedHost({ args: ["--approval-mode", "always-ask"], env, session: true }, h => ({ host, sid } = h));

	test("a call in an approval prompt is answered at once; approving later does not run it", async () => {
		const work = new StoppableWork(host.cwd);
		try {
			const pending = callTool(host, sid, "bash", { command: work.command }, 31);
			const prompt = await host.waitFrame(f => f.method === "select" && String(f.title).includes(work.marker));
			await cancel(host, sid, 31);
			expect((await pending).body.error).toEqual({ code: -32800, message: "request cancelled" });
			host.send({ type: "extension_ui_response", id: prompt.id, value: "Approve" });
			// A later call approved and answered: by then the host has acted on the first approval.
			const next = `after-${crypto.randomUUID()}`;
			const follow = callTool(host, sid, "bash", { command: `echo ${next}` }, 32);
			const second = await host.waitFrame(f => f.method === "select" && String(f.title).includes(next));
			host.send({ type: "extension_ui_response", id: second.id, value: "Approve" });
			expect(JSON.stringify((await follow).body)).toContain(next);
			expect(work.pids()).toEqual([]);
			expect(work.markerExists()).toBe(false);
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("257 concurrent calls -> the 257th gets -32000 server busy", async () => {
		// The host shows one approval prompt at a time, so all 256 calls stay in flight behind it.
		const mine = await openSession(host);
		const pending = Array.from({ length: 256 }, (_, i) =>
			callTool(host, mine, "bash", { command: `echo held-${i}` }, 1000 + i),
		);
		const starts = () =>
			existsSync(host.auditPath)
				? readFileSync(host.auditPath, "utf8")
						.split("\n")
						.filter(l => l.includes("held-") && l.includes('"start"')).length
				: 0;
		await waitFor("256 calls in flight", () => starts() >= 256, {
			timeoutMs: 30_000,
			everyMs: 100,
			seen: () => `${starts()} started; ${host.frames.filter(f => f.method === "select").length} prompts`,
		});
		// fetch's connection pool is full of the 256 held calls: the next requests go over raw TCP.
		const headers = {
			authorization: `Bearer ${host.token}`,
			"mcp-session-id": mine,
			"content-type": "application/json",
		};
		const extra = await rawHttp(
			host.port,
			"POST",
			"/",
			headers,
			JSON.stringify({ jsonrpc: "2.0", id: 2000, method: "tools/call", params: { name: "bash", arguments: {} } }),
		);
		expect(extra.startsWith("HTTP/1.1 200")).toBe(true);
		expect(extra).toContain('{"jsonrpc":"2.0","id":2000,"error":{"code":-32000,"message":"server busy"}}');
		const del = await rawHttp(host.port, "DELETE", "/", headers);
		expect(del.startsWith("HTTP/1.1 204")).toBe(true);
		const results = await Promise.all(pending);
		expect(results.every(r => (r.body.error as { code: number } | undefined)?.code === -32800)).toBe(true);
	}, 60_000);
});

describe("background jobs", () => {
	test("fast threshold: the remote caller gets the real output, the host agent is not woken", async () => {
		const fake = startFakeModel();
		const host = await Host.start({ models: modelsYml(fake.url), files: FAST_BACKGROUND });
		try {
			const sid = await openSession(host);
			const r = await sseCall(host, sid, 41, { command: "echo early; sleep 6; echo bg-done" });
			const final = JSON.stringify(r.events.at(-1));
			expect(final).toContain("bg-done");
			expect(final).not.toContain("Backgrounded as job");
			const beats = r.events.filter(e => String((e.params as { message?: string })?.message).includes("still running"));
			expect(beats.length).toBeGreaterThanOrEqual(1);
			// A window for a wrong wake-up of the host's agent to show: an absence has no event to wait for.
			await Bun.sleep(2000);
			expect(host.frames.some(f => f.type === "agent_start")).toBe(false);
			expect(fake.requests.length).toBe(0);
		} finally {
			await host.stop();
			host.cleanup();
			fake.stop();
		}
	}, 60_000);

	test("the host's own bash still backgrounds as configured", async () => {
		const fake = startFakeModel([{ tool: "bash", input: { command: "sleep 4; echo local-done" } }]);
		const host = await Host.start({ models: modelsYml(fake.url), files: FAST_BACKGROUND });
		try {
			host.send({ type: "prompt", id: "p1", message: "run it" });
			await waitFor("the model's second request", () => fake.requests.length >= 2, { timeoutMs: 30_000 });
			expect(JSON.stringify(fake.requests[1]?.messages)).toContain("Backgrounded as job");
		} finally {
			await host.stop();
			host.cleanup();
			fake.stop();
		}
	}, 60_000);

	test("[slow, 75 s] plain JSON sleep 75 returns its output; SSE with a 20 s client timeout completes; host agent not woken", async () => {
		const fake = startFakeModel();
		const host = await Host.start({ models: modelsYml(fake.url) });
		const client = await sdkClient(host);
		try {
			const sid = await openSession(host);
			const json = callTool(host, sid, "bash", { command: "sleep 75; echo json-after-75" }, 51);
			const beats: number[] = [];
			const sse = client.callTool(
				{ name: "bash", arguments: { command: "echo start; sleep 75; echo sse-after-75" } },
				undefined,
				{
					onprogress: p => beats.push(p.progress),
					timeout: 20_000,
					resetTimeoutOnProgress: true,
					maxTotalTimeout: 200_000,
				},
			);
			const [j, s] = await Promise.all([json, sse]);
			expect(JSON.stringify(j.body)).toContain("json-after-75");
			expect(JSON.stringify(j.body)).not.toContain("Backgrounded as job");
			expect(s.isError).toBe(false);
			expect(JSON.stringify(s.content)).toContain("sse-after-75");
			expect(beats.length).toBeGreaterThanOrEqual(3);
			// A window for a wrong wake-up of the host's agent to show: an absence has no event to wait for.
			await Bun.sleep(2000);
			expect(host.frames.some(f => f.type === "agent_start")).toBe(false);
			expect(fake.requests.length).toBe(0);
		} finally {
			await client.close();
			await host.stop();
			host.cleanup();
			fake.stop();
		}
	}, 150_000);
});
