import { describe, expect, test } from "bun:test";
import { acceptsEventStream, openSseCall, tailBytes } from "../../../src/core/progress.ts";

async function readAll(res: Response): Promise<string> {
	return await res.text();
}

const events = (raw: string) =>
	raw
		.split("\n\n")
		.filter(b => b.startsWith("data: "))
		.map(
			b => JSON.parse(b.slice(6)) as { method?: string; params?: { progress: number; message: string }; id?: number },
		);

describe("tailBytes", () => {
	test("short text -> unchanged", () => {
		expect(tailBytes("abc", 1024)).toBe("abc");
	});
	test("long ASCII -> the last 1024 bytes", () => {
		const text = `${"a".repeat(2000)}END`;
		const t = tailBytes(text);
		expect(Buffer.byteLength(t)).toBe(1024);
		expect(t.endsWith("END")).toBe(true);
	});
	test("multi-byte text -> never over the limit, never a broken character", () => {
		const t = tailBytes("é".repeat(1000), 101);
		expect(Buffer.byteLength(t)).toBeLessThanOrEqual(101);
		expect(t).toBe("é".repeat(50));
	});
});

describe("acceptsEventStream", () => {
	for (const [accept, ok] of [
		["application/json, text/event-stream", true],
		["text/event-stream, application/json", true],
		["application/json;q=1, text/event-stream;q=0.5", true],
		["TEXT/EVENT-STREAM", true],
		["*/*", true],
		["application/json", false],
		[null, false],
		["text/event-streamx", false],
	] as const) {
		test(`${String(accept)} -> ${ok}`, () => {
			expect(acceptsEventStream(accept)).toBe(ok);
		});
	}
});

describe("openSseCall", () => {
	test("progress values strictly increase, final message last, nothing after it", async () => {
		const call = openSseCall("t1", { minIntervalMs: 0, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		call.progress("a\n");
		call.progress("a\nb\n");
		await call.finish({ jsonrpc: "2.0", id: 1, result: { content: [], isError: false } });
		call.progress("late");
		const ev = events(await readAll(call.response));
		expect(ev.map(e => e.params?.progress ?? "final")).toEqual([1, 2, "final"]);
		expect(ev[0]?.params).toMatchObject({ progressToken: "t1", message: "a\n" });
		expect(call.response.headers.get("content-type")).toBe("text/event-stream");
	});

	test("updates faster than the interval are coalesced; the latest is always delivered", async () => {
		const call = openSseCall(7, { minIntervalMs: 50, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		for (let i = 1; i <= 20; i++) call.progress(`line${i}`);
		await Bun.sleep(80);
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const ev = events(await readAll(call.response)).filter(e => e.method === "notifications/progress");
		expect(ev.length).toBe(2);
		expect(ev[0]?.params?.message).toBe("line1");
		expect(ev[1]?.params?.message).toBe("line20");
	});

	test("a pending update is flushed before the final response", async () => {
		const call = openSseCall(1, { minIntervalMs: 200, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		call.progress("first");
		call.progress("second");
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const msgs = events(await readAll(call.response)).map(e => e.params?.message ?? "final");
		expect(msgs).toEqual(["first", "second", "final"]);
	});

	test("silence -> heartbeats with elapsed time and keep-alive comments", async () => {
		const call = openSseCall(1, { minIntervalMs: 0, heartbeatMs: 30, keepaliveMs: 45 });
		await Bun.sleep(120);
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const raw = await readAll(call.response);
		expect(raw).toContain(": keepalive\n\n");
		const beats = events(raw).filter(e => e.params?.message.startsWith("still running after"));
		expect(beats.length).toBeGreaterThanOrEqual(2);
	});

	test("backgrounded -> heartbeats say so and later output is ignored", async () => {
		const call = openSseCall(1, { minIntervalMs: 0, heartbeatMs: 20, keepaliveMs: 10_000 });
		call.backgrounded();
		call.progress("ignored");
		await Bun.sleep(60);
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const ev = events(await readAll(call.response)).filter(e => e.method);
		expect(ev.length).toBeGreaterThanOrEqual(1);
		expect(ev.every(e => e.params?.message.includes("backgrounded"))).toBe(true);
	});

	test("finish(null) for a cancelled call ends the stream without a response", async () => {
		const call = openSseCall(1, { minIntervalMs: 0, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		call.progress("x");
		await call.finish(null);
		const ev = events(await readAll(call.response));
		expect(ev.every(e => e.method === "notifications/progress")).toBe(true);
	});
});
