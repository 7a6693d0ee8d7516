/**
 * The audit log of real calls, read from disk (the second channel): pairing, ordering against the
 * tool run and the response, redaction, 0600, unwritable paths, and hung calls.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { callTool, canConnect, Host, openSession, rpcPost, useSharedHost, withHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

interface Rec {
	ts: string;
	id: string;
	sid: string | null;
	phase: "start" | "done" | "refused";
	tool: string;
	isError?: boolean;
	args: string;
	cancelled?: boolean;
}

const readLog = (path: string): Rec[] =>
	readFileSync(path, "utf8")
		.split("\n")
		.filter(Boolean)
		.map(l => JSON.parse(l) as Rec);

describe("audit log of a real host", () => {
	let host: Host;
	let sid: string;

	useSharedHost({ session: true }, h => ({ host, sid } = h));

	test("start is on disk before the tool runs; done is on disk when the reply arrives", async () => {
		const nonce = crypto.randomUUID();
		// The command prints the log as it is while the tool runs.
		const r = await callTool(host, sid, "bash", { command: `echo ${nonce} >/dev/null; cat '${host.auditPath}'` });
		const seenByTool = JSON.stringify(r.body);
		const records = readLog(host.auditPath).filter(x => x.args.includes(nonce));
		expect(records.map(x => x.phase)).toEqual(["start", "done"]);
		const [start, done] = records as [Rec, Rec];
		expect(start.id).toBe(done.id);
		expect(start.sid).toBe(sid);
		expect(done).toMatchObject({ sid, tool: "bash", isError: false });
		expect(Object.keys(start)).toEqual(["ts", "id", "sid", "token", "client", "phase", "tool", "args"]);
		expect(start).toMatchObject({ token: "owner", client: "test" });
		expect(Object.keys(done)).toEqual(["ts", "id", "sid", "token", "client", "phase", "tool", "isError", "args"]);
		// The tool saw its own start line, but not its done line.
		expect(seenByTool).toContain(start.id);
		expect(seenByTool.split(start.id).length - 1).toBe(1);
		expect(statSync(host.auditPath).mode & 0o777).toBe(0o600);
	}, 60_000);

	test("a call refused at the exposure gate never begins: a coalesced refused record names it (contract §16)", async () => {
		const r = await callTool(host, sid, "xd://bash", { command: "echo nope" });
		expect((r.body.result as { isError: boolean }).isError).toBe(true);
		const named = (rec: object) => {
			const x = rec as Record<string, unknown>;
			return (
				x.phase === "refused" &&
				(x.tool === "xd://bash" || (x.tools as unknown[] | undefined)?.includes("xd://bash") === true)
			);
		};
		// At once when it opens the token's window, else in the count written when the window closes (1 s).
		await waitFor("a refused record naming xd://bash", () => readLog(host.auditPath).some(named));
		expect(readLog(host.auditPath).some(x => x.tool === "xd://bash" && x.phase !== "refused")).toBe(false);
	}, 30_000);

	test("long string leaves are hashed, the token never appears", async () => {
		const body = "B".repeat(500);
		await callTool(host, sid, "bash", { command: `true # ${host.token}`, note: { deep: [{ body }] } });
		const text = readFileSync(host.auditPath, "utf8");
		expect(text).not.toContain(host.token);
		expect(text).not.toContain(body);
		expect(text).toContain("<len:500,sha256:");
	}, 30_000);

	test("three tools/call with 1.5 MB tool names -> earlier history stays in the live log; every record <= 8 KiB (contract §15)", async () => {
		const marker = `history-${crypto.randomUUID()}`;
		await callTool(host, sid, "bash", { command: `echo ${marker}` });
		for (let i = 0; i < 3; i++) {
			const r = await callTool(host, sid, `x${i}${"y".repeat(1_500_000)}`, {});
			expect((r.body.result as { isError: boolean }).isError).toBe(true);
		}
		await waitFor("the refusals recorded", () => readFileSync(host.auditPath, "utf8").includes("<len:1500002,sha256:"));
		const text = readFileSync(host.auditPath, "utf8");
		expect(text).toContain(marker);
		for (const line of text.split("\n").filter(Boolean)) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(8192);
	}, 60_000);

	test("a /blob error naming a 6,000-char path -> its error text is capped like an args leaf", async () => {
		const long = `/tmp/${"d".repeat(6000)}`;
		const res = await fetch(new URL(`/blob?path=${encodeURIComponent(long)}`, host.url), {
			method: "POST",
			headers: { authorization: `Bearer ${host.token}` },
			body: "x",
		});
		expect(res.status).toBeGreaterThanOrEqual(400);
		const last = readFileSync(host.auditPath, "utf8").split("\n").filter(Boolean).at(-1) ?? "";
		expect(Buffer.byteLength(last)).toBeLessThanOrEqual(8192);
		expect(last).not.toContain("d".repeat(200));
		expect(JSON.parse(last).error).toMatch(/^<len:\d+,sha256:[0-9a-f]{8}>$/);
	}, 30_000);

	test('`{"__proto__": …}` in arguments -> kept as data in the record', async () => {
		const marker = `proto-${crypto.randomUUID()}`;
		const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"__proto__":{"command":"${marker}"},"command":"true"}}}`;
		const res = await rpcPost(host, body, { "mcp-session-id": sid });
		await res.text();
		const recs = readLog(host.auditPath).filter(x => x.args.includes(marker));
		expect(recs.map(x => x.phase)).toEqual(["start", "done"]);
		expect(recs[0]?.args).toContain(`"__proto__":{"command":"${marker}"}`);
	}, 30_000);

	test("unauthorized requests are not audited", async () => {
		const before = readFileSync(host.auditPath, "utf8");
		for (let i = 0; i < 5; i++) {
			const res = await rpcPost(
				host,
				{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command: "true" } } },
				{ authorization: "Bearer nope", "mcp-session-id": sid },
			);
			expect(res.status).toBe(401);
			await res.text();
		}
		expect(readFileSync(host.auditPath, "utf8")).toBe(before);
		// The same call with the token is audited: the log was live all along.
		const nonce = crypto.randomUUID();
		await callTool(host, sid, "bash", { command: `echo ${nonce}` });
		expect(
			readLog(host.auditPath)
				.filter(x => x.args.includes(nonce))
				.map(x => x.phase),
		).toEqual(["start", "done"]);
	}, 30_000);
});

describe("unwritable audit paths never fail a call", () => {
	for (const [name, path] of [
		["/dev/full", "/dev/full"],
		["a missing directory", "{HOME}/no/such/dir/audit.log"],
	] as const) {
		test(`${name} -> the call succeeds and host stderr names the path`, async () => {
			await withHost({ env: { A2A_BRIDGE_AUDIT: path } }, async host => {
				const sid = await openSession(host);
				const r = await callTool(host, sid, "bash", { command: "echo still-works" });
				expect(JSON.stringify(r.body)).toContain("still-works");
				const shown = path.replace("{HOME}", host.home);
				expect(host.stderr).toContain(`audit record not written to ${shown} (`);
				// First failure is reported, the next ones are counted silently until the 100th.
				expect(host.stderr.split("audit record not written").length - 1).toBe(1);
			});
		}, 60_000);
	}
});

describe("hung calls", () => {
	test("a call stuck in an approval prompt has a start and no done; /a2a lists it with its age", async () => {
		await withHost({ args: ["--approval-mode", "always-ask"] }, async host => {
			const sid = await openSession(host);
			const marker = crypto.randomUUID();
			const pending = callTool(host, sid, "bash", { command: `echo ${marker}` });
			const prompt = await host.waitFrame(
				f => f.type === "extension_ui_request" && f.method === "select" && String(f.title).includes(marker),
			);
			const recs = readLog(host.auditPath).filter(x => x.args.includes(marker));
			expect(recs.map(x => x.phase)).toEqual(["start"]);
			await host.command("/a2a");
			const status = host.notifications().find(m => m.startsWith("A2A bridge: http")) ?? "";
			expect(status).toMatch(/calls in flight: 1 — bash \(\d+ s, token owner, client test\)/);
			host.send({ type: "extension_ui_response", id: prompt.id, value: "Deny" });
			await pending;
			expect(
				readLog(host.auditPath)
					.filter(x => x.args.includes(marker))
					.map(x => x.phase),
			).toEqual(["start", "done"]);
		});
	}, 60_000);
});

describe("records of the process, not of an endpoint", () => {
	test("a /host-llm switch whose body lands while the endpoint stops is still audited (issue 32 item 5)", async () => {
		const host = await Host.start();
		try {
			const body = JSON.stringify({ enabled: false });
			const head = [
				"POST /host-llm HTTP/1.1",
				`Host: 127.0.0.1:${host.port}`,
				`Authorization: Bearer ${host.token}`,
				"Content-Type: application/json",
				`Content-Length: ${body.length}`,
				"Connection: close",
			].join("\r\n");
			const sock = netConnect(host.port, "127.0.0.1");
			let answer = "";
			sock.on("data", d => {
				answer += d.toString("utf8");
			});
			const closed = new Promise(resolve => sock.on("close", resolve));
			await new Promise(resolve => sock.write(`${head}\r\n\r\n${body.slice(0, 3)}`, resolve));
			// A request sent after it is answered once the bridge has taken the first one in (one event loop).
			const state = await fetch(`${host.url}host-llm`, { headers: host.headers() });
			expect(state.status).toBe(200);
			// Now the host stops the endpoint (no new connections) while the switch still waits for its body.
			const stopping = host.stop();
			await waitFor("the endpoint stopping", async () => !(await canConnect(host.port)), { everyMs: 5 });
			sock.end(body.slice(3));
			await closed;
			await stopping;
			expect(answer).toMatch(/^HTTP\/1\.1 (200|409)/);
			// No file at all is the old drop: the switch was the only record.
			const switched = existsSync(host.auditPath) ? readLog(host.auditPath).filter(r => r.tool === "host_llm") : [];
			expect(switched).toHaveLength(1);
			expect(switched[0]).toMatchObject({ phase: "done", sid: null });
		} finally {
			await host.stop();
			host.cleanup();
		}
	}, 60_000);
});
