import { describe, expect, test } from "bun:test";
import {
	acceptsEventStream,
	SSE_QUEUE_MAX_BYTES,
	SseStream,
	type SseTimings,
	tailBytes,
} from "../../../src/core/progress.ts";
import { manualClock } from "../../helpers/clock.ts";

/** A stream on a clock the test moves by hand: no test here waits on real time. */
function open(token: string | number, timings: SseTimings) {
	const clock = manualClock();
	return { call: new SseStream(token, timings, clock), clock };
}

async function readAll(res: Response): Promise<string> {
	return await res.text();
}

/** Reads the stream as it is written: `text()` so far, `done` once it has ended. */
function reading(res: Response): { text: () => string; done: Promise<string> } {
	let text = "";
	const decoder = new TextDecoder();
	const done = (async () => {
		for await (const chunk of res.body ?? []) text += decoder.decode(chunk, { stream: true });
		return text;
	})();
	return { text: () => text, done };
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

describe("SseStream", () => {
	test("progress values strictly increase, final message last, nothing after it", async () => {
		const { call } = open("t1", { minIntervalMs: 0, heartbeatMs: 10_000, keepaliveMs: 10_000 });
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
		const { call, clock } = open(7, { minIntervalMs: 50, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		const out = reading(call.response);
		for (let i = 1; i <= 20; i++) call.progress(`line${i}`);
		clock.advance(49);
		await Bun.sleep(0);
		expect(out.text()).not.toContain('"line20"');
		// The latest update goes out once the interval has passed, before any final response.
		clock.advance(1);
		await Bun.sleep(0);
		expect(out.text()).toContain('"line20"');
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const ev = events(await out.done).filter(e => e.method === "notifications/progress");
		expect(ev.length).toBe(2);
		expect(ev[0]?.params?.message).toBe("line1");
		expect(ev[1]?.params?.message).toBe("line20");
	});

	test("a pending update is flushed before the final response", async () => {
		const { call, clock } = open(1, { minIntervalMs: 200, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		call.progress("first");
		call.progress("second");
		const finished = call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		// The final message waits for the interval on the clock, then the pending update goes first.
		clock.advance(200);
		await finished;
		const msgs = events(await readAll(call.response)).map(e => e.params?.message ?? "final");
		expect(msgs).toEqual(["first", "second", "final"]);
	});

	test("silence -> heartbeats with elapsed time and keep-alive comments", async () => {
		const { call, clock } = open(1, { minIntervalMs: 0, heartbeatMs: 30, keepaliveMs: 45 });
		const out = reading(call.response);
		const beatsIn = (raw: string) => raw.split("still running after").length - 1;
		clock.advance(29);
		await Bun.sleep(0);
		expect(beatsIn(out.text())).toBe(0);
		clock.advance(71);
		await Bun.sleep(0);
		expect(out.text()).toContain(": keepalive");
		expect(beatsIn(out.text())).toBe(3);
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const raw = await out.done;
		expect(raw).toContain(": keepalive\n\n");
		const beats = events(raw).filter(e => e.params?.message.startsWith("still running after"));
		expect(beats.length).toBeGreaterThanOrEqual(2);
	});

	test("backgrounded -> heartbeats say so and later output is ignored", async () => {
		const { call, clock } = open(1, { minIntervalMs: 0, heartbeatMs: 20, keepaliveMs: 10_000 });
		const out = reading(call.response);
		call.backgrounded();
		call.progress("ignored");
		clock.advance(20);
		await Bun.sleep(0);
		expect(out.text()).toContain("backgrounded");
		await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
		const ev = events(await out.done).filter(e => e.method);
		expect(ev.length).toBeGreaterThanOrEqual(1);
		expect(ev.every(e => e.params?.message.includes("backgrounded"))).toBe(true);
	});

	test("finish(null) for a cancelled call ends the stream without a response", async () => {
		const { call } = open(1, { minIntervalMs: 0, heartbeatMs: 10_000, keepaliveMs: 10_000 });
		call.progress("x");
		await call.finish(null);
		const ev = events(await readAll(call.response));
		expect(ev.every(e => e.method === "notifications/progress")).toBe(true);
	});

	describe("a client that never reads (bounded queue)", () => {
		const quiet = { minIntervalMs: 0, heartbeatMs: 10_000, keepaliveMs: 10_000 };
		const line = (i: number) => `${i}:${"x".repeat(900)}`;
		const progressBytes = (raw: string) =>
			raw
				.split("\n\n")
				.filter(b => b.includes("notifications/progress"))
				.reduce((n, b) => n + Buffer.byteLength(b) + 2, 0);

		test("10,000 updates, nothing read: at most the bound is queued, then the latest and the result", async () => {
			const { call } = open("big", quiet);
			for (let i = 1; i <= 10_000; i++) call.progress(line(i));
			await call.finish({ jsonrpc: "2.0", id: 9, result: { content: [], isError: false } });
			const raw = await readAll(call.response);
			const ev = events(raw);
			const progress = ev.filter(e => e.method === "notifications/progress");
			// Everything before the last (forced) notification was queued under the bound.
			const last = raw.lastIndexOf("data: {", raw.lastIndexOf("notifications/progress"));
			expect(progressBytes(raw.slice(0, last))).toBeLessThanOrEqual(SSE_QUEUE_MAX_BYTES);
			expect(progress.length).toBeLessThan(100);
			expect(progress.at(-1)?.params?.message).toBe(line(10_000));
			const values = progress.map(e => e.params?.progress ?? 0);
			expect(values).toEqual(values.map((_, i) => i + 1));
			expect(ev.at(-1)).toMatchObject({ id: 9, result: { isError: false } });
		});

		test("the output that waited goes out once the client has read (at the next tick at the latest)", async () => {
			const { call, clock } = open("wait", quiet);
			for (let i = 1; i <= 1_000; i++) call.progress(line(i));
			const reader = call.response.body?.getReader();
			if (!reader) throw new Error("no body");
			const decoder = new TextDecoder();
			let seen = "";
			// Bounded: the queue holds < 100 events, so the latest must show up well within 10,000 reads.
			for (let reads = 0; reads < 10_000 && !seen.includes(`"message":"1000:`); reads++) {
				// One tick of the ticker (every 1 s here) per read: the waiting output goes out at a tick once there is room.
				clock.advance(1000);
				const r = await reader.read();
				if (r.done) break;
				seen += decoder.decode(r.value, { stream: true });
			}
			expect(seen).toContain(`"message":"1000:`);
			await call.finish({ jsonrpc: "2.0", id: 1, result: {} });
			reader.releaseLock();
		});

		test("heartbeats and keep-alives beyond the bound are dropped; the result still comes", async () => {
			const { call, clock } = open("hb", { minIntervalMs: 0, heartbeatMs: 50, keepaliveMs: 50 });
			for (let i = 1; i <= 1_000; i++) call.progress(line(i));
			// A minute of ticks (every 10 ms) with nothing read: each heartbeat and keep-alive finds the queue full.
			clock.advance(60_000);
			await call.finish({ jsonrpc: "2.0", id: 2, result: {} });
			const raw = await readAll(call.response);
			expect(raw.includes(": keepalive")).toBe(false);
			expect(raw.includes("still running after")).toBe(false);
			expect(events(raw).at(-1)).toMatchObject({ id: 2 });
		});

		test("a progress token so large that one notification exceeds the bound: only the last output and the result", async () => {
			const { call } = open("t".repeat(SSE_QUEUE_MAX_BYTES), quiet);
			for (let i = 1; i <= 50; i++) call.progress(line(i));
			await call.finish({ jsonrpc: "2.0", id: 3, result: {} });
			const ev = events(await readAll(call.response));
			expect(ev.map(e => e.params?.message.split(":")[0] ?? e.id)).toEqual(["50", 3]);
		});
	});
});
