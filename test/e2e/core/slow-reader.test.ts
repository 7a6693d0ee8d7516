/**
 * A client that stops reading an SSE response (issue 19 item 6): a raw TCP client asks for
 * progress on a `bash` that prints fast, never reads while it runs, and the host's memory (read
 * from /proc, a second channel) must stay near its level; when the client reads at last it gets the
 * whole stream and the final result.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { procStatus } from "../../helpers/procs.ts";
import { waitFor } from "../../helpers/wait.ts";

const rssMiB = (pid: number): number => procStatus(pid, "VmRSS") / (1024 * 1024);

/** The body of a chunked HTTP/1.1 response; null while the terminating chunk has not arrived. */
function dechunk(raw: Buffer): string | null {
	const head = raw.indexOf("\r\n\r\n");
	if (head < 0) return null;
	const parts: Buffer[] = [];
	for (let at = head + 4; ; ) {
		const eol = raw.indexOf("\r\n", at);
		if (eol < 0) return null;
		const size = Number.parseInt(raw.subarray(at, eol).toString("latin1"), 16);
		if (size === 0) return Buffer.concat(parts).toString("utf8");
		if (raw.length < eol + 2 + size + 2) return null;
		parts.push(raw.subarray(eol + 2, eol + 2 + size));
		at = eol + 2 + size + 2;
	}
}

/** POSTs a tools/call asking for progress over a socket that is paused at once: nothing is read. */
function stalledCall(host: Host, sid: string, command: string): { sock: Socket; received: () => Buffer } {
	const body = JSON.stringify({
		jsonrpc: "2.0",
		id: 7,
		method: "tools/call",
		params: { name: "bash", arguments: { command }, _meta: { progressToken: BIG_TOKEN } },
	});
	const sock = connect(host.port, "127.0.0.1");
	const chunks: Buffer[] = [];
	sock.on("data", d => chunks.push(Buffer.from(d)));
	sock.pause();
	const head = [
		"POST / HTTP/1.1",
		`Host: 127.0.0.1:${host.port}`,
		`Authorization: Bearer ${host.token}`,
		"Content-Type: application/json",
		"Accept: application/json, text/event-stream",
		`Mcp-Session-Id: ${sid}`,
		"MCP-Protocol-Version: 2025-11-25",
		`Content-Length: ${Buffer.byteLength(body)}`,
	];
	sock.write(`${head.join("\r\n")}\r\n\r\n${body}`);
	return { sock, received: () => Buffer.concat(chunks) };
}

/** 1 MiB: every notification echoes the token, so an unbounded queue would grow ~1 MiB per update. */
const BIG_TOKEN = `slow-${"t".repeat(1024 * 1024)}`;
/** Host RSS growth allowed while the call runs (measured: 1-5 MiB bounded, 122 MiB without the bound). */
const GROWTH_MAX_MIB = 48;

const doneRecords = (host: Host): number =>
	readFileSync(host.auditPath, "utf8")
		.split("\n")
		.filter(l => l.includes('"done"') && l.includes('"bash"')).length;

describe("a client that never reads its SSE stream", () => {
	let host: Host;
	let sid: string;
	useSharedHost({ session: true, env: { A2A_BRIDGE_PROGRESS_INTERVAL_MS: "0" } }, h => ({ host, sid } = h));

	test("host memory stays bounded while bash prints fast; the final result arrives when the client reads", async () => {
		const pid = host.proc.pid;
		const command = "for i in $(seq 1 3000); do echo $i; sleep 0.001; done; echo slow-reader-end";
		// Warm up with the same command over a reading client, so the level below is the host's own.
		const warm = await fetch(host.url, {
			method: "POST",
			headers: host.headers({ "mcp-session-id": sid, accept: "application/json, text/event-stream" }),
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 6,
				method: "tools/call",
				params: { name: "bash", arguments: { command }, _meta: { progressToken: "warm" } },
			}),
		});
		expect(await warm.text()).toContain("slow-reader-end");
		const before = rssMiB(pid);
		const doneBefore = doneRecords(host);
		const call = stalledCall(host, sid, command);
		let peak = before;
		await waitFor(
			"the stalled call's done audit record",
			() => {
				peak = Math.max(peak, rssMiB(pid));
				return doneRecords(host) > doneBefore;
			},
			{ timeoutMs: 90_000 },
		);
		peak = Math.max(peak, rssMiB(pid));
		call.sock.resume();
		let body: string | null = null;
		await waitFor("the whole SSE body", () => {
			body = dechunk(call.received());
			return body !== null;
		});
		call.sock.destroy();
		const text = body ?? "";
		const events = text
			.split("\n\n")
			.filter(b => b.startsWith("data: "))
			.map(
				b =>
					JSON.parse(b.slice(6)) as {
						id?: number;
						params?: { progress: number };
						result?: { isError: boolean; content: unknown };
					},
			);
		const values = events.flatMap(e => (e.params ? [e.params.progress] : []));
		expect(values).toEqual(values.map((_, i) => i + 1));
		const last = events.at(-1);
		expect(last?.id).toBe(7);
		expect(last?.result?.isError).toBe(false);
		expect(JSON.stringify(last?.result?.content)).toContain("slow-reader-end");
		expect(peak - before).toBeLessThan(GROWTH_MAX_MIB);
	}, 180_000);
});
