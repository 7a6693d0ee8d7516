/**
 * The in-flight cap counts running work (contract §15): a cancelled call whose tool ignores its
 * signal keeps its slot, shown in `/a2a`, until the tool has stopped; a caller that goes away
 * without cancelling (2025 eras) leaves its call running, marked abandoned. The tool is a fixture
 * that runs until a file appears, so every wait below ends on a real signal.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, rpcPost, useSharedHost } from "../../helpers/host.ts";

const STUBBORN = join(import.meta.dir, "..", "..", "fixtures", "stubborn-tool-ext.ts");

let host: Host;
let sid: string;
useSharedHost({ args: ["-e", STUBBORN], session: true }, h => ({ host, sid } = h));

async function status(): Promise<string> {
	const before = host.notifications().length;
	await host.command("/a2a");
	return (
		host
			.notifications()
			.slice(before)
			.find(m => m.startsWith("A2A bridge: http")) ?? ""
	);
}

/** Polls `/a2a` until `pred` holds (bounded). */
async function statusUntil(pred: (text: string) => boolean): Promise<string> {
	const deadline = Date.now() + 20_000;
	let text = await status();
	while (!pred(text) && Date.now() < deadline) text = await status();
	return text;
}

describe("running work counts", () => {
	test("a cancelled call whose tool ignores the signal keeps its slot in /a2a until the tool stops", async () => {
		const release = join(host.home, `release-${crypto.randomUUID()}`);
		const pending = callTool(host, sid, "a2a_stubborn", { release }, 41);
		await statusUntil(t => t.includes("a2a_stubborn ("));
		const ack = await rpcPost(
			host,
			{ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 41 } },
			{ "mcp-session-id": sid },
		);
		expect(ack.status).toBe(202);
		expect((await pending).body.error).toEqual({ code: -32800, message: "request cancelled" });
		expect(await status()).toMatch(/calls in flight: 1 — a2a_stubborn \(\d+ s, cancelled, still stopping[,)]/);
		writeFileSync(release, "");
		expect(await statusUntil(t => t.includes("calls in flight: 0"))).toContain("calls in flight: 0");
	}, 60_000);

	test("a caller that disconnects without cancelling -> the call runs on, /a2a marks it abandoned", async () => {
		const release = join(host.home, `release-${crypto.randomUUID()}`);
		const gone = new AbortController();
		const request = fetch(new URL("/", host.url), {
			method: "POST",
			headers: host.headers({ "mcp-session-id": sid }),
			body: JSON.stringify({
				jsonrpc: "2.0",
				id: 43,
				method: "tools/call",
				params: { name: "a2a_stubborn", arguments: { release } },
			}),
			signal: gone.signal,
		}).catch(() => null);
		await statusUntil(t => t.includes("a2a_stubborn ("));
		gone.abort();
		await request;
		expect(await statusUntil(t => t.includes("abandoned by its caller"))).toMatch(
			/a2a_stubborn \(\d+ s, abandoned by its caller[,)]/,
		);
		writeFileSync(release, "");
		expect(await statusUntil(t => t.includes("calls in flight: 0"))).toContain("calls in flight: 0");
	}, 60_000);
});
