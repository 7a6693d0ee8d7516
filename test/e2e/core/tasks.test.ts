/**
 * The Tasks extension on the raw wire (contract §17) against a real host and its real `bash`: a
 * declaring call outlives its 1 s window as a task; each rule is checked through a second channel —
 * the process table (/proc) and a marker file the command writes when it runs to its end — and the
 * audit log, not only through the reply.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { envelope, modernPost } from "../../helpers/modern.ts";
import { StoppableWork } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const TASKS = "io.modelcontextprotocol/tasks";
const CI = `ci-${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");
const TEMP = `temp-${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll("-", "");
const declaring = (client = "tasks-wire") => ({
	...envelope(client),
	"io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
});

type Body = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };

let host: Host;

const as = (token: string) => ({ authorization: `Bearer ${token}` });

async function post(
	method: string,
	params: Record<string, unknown>,
	token = host.token,
	meta: Record<string, unknown> = declaring(),
) {
	const res = await modernPost(host, method, params, { meta, headers: as(token) });
	return { status: res.status, body: (await res.json()) as Body };
}

async function startTask(command: string, token = host.token): Promise<string> {
	const r = await post("tools/call", { name: "bash", arguments: { command } }, token);
	expect(r.body.result?.resultType).toBe("task");
	return String(r.body.result?.taskId);
}

const get = (taskId: string, token = host.token) => post("tasks/get", { taskId }, token);

async function pollEnd(taskId: string, token: string): Promise<Record<string, unknown>> {
	const deadline = Date.now() + 30_000;
	for (;;) {
		const r = await get(taskId, token);
		const s = r.body.result?.status;
		if (s !== "working") return r.body.result ?? {};
		if (Date.now() > deadline) throw new Error(`task ${taskId} still working after 30 s`);
		await Bun.sleep(50);
	}
}

describe("Tasks extension on the raw wire", () => {
	useSharedHost({ config: { tokens: [{ name: "ci", token: CI }] } }, h => ({ host } = h));

	test("a declaring call still running after the window -> flat handle; it runs to its end; tasks/get inlines the result; audit names the task", async () => {
		const marker = `task-done-${crypto.randomUUID()}`;
		const taskId = await startTask(`sleep 2; echo ${marker}; touch ${marker}`);
		expect(taskId).toMatch(/^[A-Za-z0-9_-]{24}$/);
		const working = await get(taskId);
		expect(working.body.result).toMatchObject({ taskId, status: "working", resultType: "complete" });
		const end = await pollEnd(taskId, host.token);
		expect(end.status).toBe("completed");
		const result = end.result as { content: Array<{ text: string }>; isError: boolean };
		expect(result.isError).toBe(false);
		expect(result.content[0]?.text).toContain(marker);
		expect(existsSync(join(host.cwd, marker))).toBe(true);
		const records = auditRecords(host, marker);
		// The start is written before the window ends, when the call is no task yet; its done names the task.
		expect(records.map(r => [r.phase, r.task])).toEqual([
			["start", undefined],
			["done", taskId],
		]);
	}, 60_000);

	test("issue 30: a declaring call that ends within its window is no task -> its records carry no task id", async () => {
		// A host's first bash can take longer than the 1 s window: one plain call warms it up.
		await post("tools/call", { name: "bash", arguments: { command: "true" } }, host.token, envelope());
		const marker = `quick-${crypto.randomUUID()}`;
		const r = await post("tools/call", { name: "bash", arguments: { command: `echo ${marker}` } });
		expect(r.body.result?.resultType).toBe("complete");
		expect(JSON.stringify(r.body.result?.content)).toContain(marker);
		const records = await waitFor("its done record", () => {
			const found = auditRecords(host, marker);
			return found.some(x => x.phase === "done") ? found : undefined;
		});
		expect(records.map(x => [x.phase, "task" in x])).toEqual([
			["start", false],
			["done", false],
		]);
	}, 60_000);

	test("a tool error is completed with isError (not failed)", async () => {
		const taskId = await startTask("sleep 1.5; exit 3");
		const end = await pollEnd(taskId, host.token);
		expect(end.status).toBe("completed");
		expect((end.result as { isError: boolean }).isError).toBe(true);
	}, 60_000);

	test("the same call without the declaration runs as today: one plain answer after > 1 s, no task", async () => {
		const marker = `plain-${crypto.randomUUID()}`;
		const r = await post(
			"tools/call",
			{ name: "bash", arguments: { command: `sleep 1.5; echo ${marker}` } },
			host.token,
			envelope(),
		);
		expect(r.status).toBe(200);
		expect(r.body.result?.resultType).toBe("complete");
		expect(r.body.result && "taskId" in r.body.result).toBe(false);
		expect(JSON.stringify(r.body.result?.content)).toContain(marker);
		expect(auditRecords(host, marker).every(x => !("task" in x))).toBe(true);
	}, 60_000);

	test("connection close: the handle's connection is torn down -> the command runs on to its marker", async () => {
		const work = new StoppableWork(host.cwd);
		// A raw socket, destroyed right after the handle arrives: nothing of the client stays connected.
		const body = JSON.stringify({
			jsonrpc: "2.0",
			id: 7,
			method: "tools/call",
			params: { name: "bash", arguments: { command: work.command.replace("60.", "3.") }, _meta: declaring() },
		});
		const head = [
			"POST / HTTP/1.1",
			`Host: 127.0.0.1:${host.port}`,
			`Authorization: Bearer ${host.token}`,
			"Content-Type: application/json",
			"Accept: application/json, text/event-stream",
			"MCP-Protocol-Version: 2026-07-28",
			"Mcp-Method: tools/call",
			"Mcp-Name: bash",
			`Content-Length: ${Buffer.byteLength(body)}`,
			"",
			"",
		].join("\r\n");
		let got = "";
		const sock = await Bun.connect({
			hostname: "127.0.0.1",
			port: host.port,
			socket: {
				data(_s, d) {
					got += d.toString();
				},
			},
		});
		sock.write(head + body);
		const taskId = await waitFor("task handle on the raw socket", () => /"taskId":"([^"]+)"/.exec(got)?.[1], {
			timeoutMs: 10_000,
		});
		sock.terminate();
		try {
			const pids = await waitFor(
				"the command's processes",
				() => {
					const p = work.pids();
					return p.length > 0 ? p : undefined;
				},
				{ timeoutMs: 10_000 },
			);
			expect(pids.every(p => existsSync(`/proc/${p}`))).toBe(true);
			await waitFor("marker written by the command", () => (work.markerExists() ? true : undefined), {
				timeoutMs: 15_000,
			});
			expect((await pollEnd(taskId, host.token)).status).toBe("completed");
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("tasks/cancel -> the process is killed (/proc), no marker, status cancelled, audit cancelled with the task id", async () => {
		const work = new StoppableWork(host.cwd);
		try {
			const taskId = await startTask(work.command);
			await work.running();
			const ack = await post("tasks/cancel", { taskId });
			expect(ack.body.result).toMatchObject({ resultType: "complete" });
			expect(ack.body.result && "taskId" in ack.body.result).toBe(false);
			await work.stopped();
			expect((await get(taskId)).body.result?.status).toBe("cancelled");
			const done = await waitFor("done record", () => auditRecords(host, work.marker).find(r => r.phase === "done"), {
				timeoutMs: 5000,
			});
			expect(done).toMatchObject({ cancelled: true, task: taskId });
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("ownership: another token's tasks/get and tasks/cancel answer exactly as an unknown id and change nothing (/proc)", async () => {
		const work = new StoppableWork(host.cwd);
		try {
			const taskId = await startTask(work.command);
			await work.running();
			const unknown = await post("tasks/get", { taskId: "AAAAAAAAAAAAAAAAAAAAAAAA" }, CI);
			expect(unknown.status).toBe(400);
			expect(unknown.body.error?.code).toBe(-32602);
			for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
				const theirs = await post(method, { taskId }, CI);
				const none = await post(method, { taskId: "AAAAAAAAAAAAAAAAAAAAAAAA" }, CI);
				expect([theirs.status, theirs.body]).toEqual([none.status, none.body]);
			}
			expect(work.pids().every(p => existsSync(`/proc/${p}`))).toBe(true);
			expect(work.pids().length).toBeGreaterThan(0);
			expect((await get(taskId)).body.result?.status).toBe("working");
			await post("tasks/cancel", { taskId });
			await work.stopped();
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("-32021 for tasks/* without the declaration; tasks/result and tasks/list are method not found; Mcp-Name must be the task id", async () => {
		const taskId = await startTask("sleep 1.5");
		const plain = await post("tasks/get", { taskId }, host.token, envelope());
		expect(plain.status).toBe(400);
		expect(plain.body.error?.code).toBe(-32021);
		for (const method of ["tasks/result", "tasks/list"]) {
			const r = await post(method, { taskId }, host.token);
			expect([r.status, r.body.error?.code]).toEqual([404, -32601]);
		}
		const res = await modernPost(
			host,
			"tasks/get",
			{ taskId },
			{ meta: declaring(), headers: { "mcp-name": "other" } },
		);
		expect(res.status).toBe(400);
		expect(((await res.json()) as Body).error?.code).toBe(-32020);
		await pollEnd(taskId, host.token);
	}, 60_000);

	test("/a2a lists a running task with its token and client; revoking its token kills it (/proc) and forgets it", async () => {
		await host.command(`/a2a token add temp`);
		const added = host.notifications().find(n => n.includes("token 'temp' is live")) ?? "";
		const secret = added.split("\n")[1] ?? TEMP;
		const work = new StoppableWork(host.cwd);
		try {
			const taskId = await startTask(work.command, secret);
			await work.running();
			const before = host.notifications().length;
			await host.command("/a2a");
			const status =
				host
					.notifications()
					.slice(before)
					.find(n => n.startsWith("A2A bridge:")) ?? "";
			expect(status).toContain(`task ${taskId.slice(0, 8)}`);
			expect(status).toMatch(/bash \(\d+ s, task [^)]*token temp, client tasks-wire\)/);
			await host.command("/a2a token revoke temp");
			await work.stopped();
			expect((await get(taskId, secret)).status).toBe(401);
			const done = await waitFor("done record", () => auditRecords(host, work.marker).find(r => r.phase === "done"), {
				timeoutMs: 5000,
			});
			expect(done).toMatchObject({ cancelled: true, token: "temp", task: taskId });
		} finally {
			work.cleanup();
		}
	}, 60_000);

	test("2026-07-28 without tasks: a dropped stream cancels the call, and the retried call runs again from the start", async () => {
		const marker = `retry-${crypto.randomUUID()}`;
		const command = `sleep 1.2; touch ${marker}-$RANDOM; echo ${marker}`;
		const ac = new AbortController();
		const dropped = modernPost(
			host,
			"tools/call",
			{ name: "bash", arguments: { command } },
			{ signal: ac.signal },
		).catch(e => e);
		await waitFor("first start record", () => (auditRecords(host, marker).length > 0 ? true : undefined), {
			timeoutMs: 10_000,
		});
		ac.abort();
		await dropped;
		await waitFor("first done record", () => auditRecords(host, marker).find(r => r.phase === "done"), {
			timeoutMs: 10_000,
		});
		const retried = await post("tools/call", { name: "bash", arguments: { command } }, host.token, envelope());
		expect(JSON.stringify(retried.body.result?.content)).toContain(marker);
		const records = auditRecords(host, marker);
		expect(records.map(r => [r.phase, r.cancelled ?? false])).toEqual([
			["start", false],
			["done", true],
			["start", false],
			["done", false],
		]);
		expect(records[0]?.id).not.toBe(records[2]?.id);
		// One run reached its touch: the retried one (the dropped one was killed before it).
		expect(readdirSync(host.cwd).filter(f => f.startsWith(marker)).length).toBe(1);
	}, 60_000);
});
