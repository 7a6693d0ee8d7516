import { afterEach, describe, expect, test } from "bun:test";
import { type Binding, bindBun, Endpoint } from "../../../src/core/listen.ts";

interface Deferred<T> {
	promise: Promise<T>;
	resolve(v: T): void;
	reject(e: unknown): void;
}
function deferred<T = void>(): Deferred<T> {
	let resolve!: (v: T) => void;
	let reject!: (e: unknown) => void;
	const promise = new Promise<T>((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return { promise, resolve, reject };
}

/** A binding that records how often it was stopped. */
function fakeBinding(port = 1234) {
	const state = { stops: 0 };
	const binding: Binding = {
		port,
		stop: async () => {
			state.stops++;
		},
	};
	return { binding, state };
}

/** Everything a test bound, stopped in afterEach even when the test failed. */
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

describe("Endpoint", () => {
	test("two concurrent start() calls -> open called once, both get the same result", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const gate = deferred<{ binding: Binding }>();
		let opens = 0;
		const open = () => {
			opens++;
			return gate.promise;
		};
		const a = ep.start(open);
		const b = ep.start(open);
		const r = { binding: fakeBinding().binding };
		gate.resolve(r);
		expect(await a).toBe(r);
		expect(await b).toBe(r);
		expect(opens).toBe(1);
		expect(ep.running).toBe(r);
	});

	test("start() while running -> the running result, open not called", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const r = { binding: fakeBinding().binding };
		await ep.start(async () => r);
		let opens = 0;
		expect(
			await ep.start(async () => {
				opens++;
				return r;
			}),
		).toBe(r);
		expect(opens).toBe(0);
	});

	test("stop() during a slow open -> the bound result is released, running null, start yields null", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const gate = deferred<{ binding: Binding }>();
		const { binding, state } = fakeBinding();
		const starting = ep.start(() => gate.promise);
		const stopping = ep.stop();
		gate.resolve({ binding });
		await stopping;
		expect(await starting).toBeNull();
		expect(state.stops).toBe(1);
		expect(ep.running).toBeNull();
	});

	test("stop() after start -> binding stopped once, running null; second stop is a no-op", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const { binding, state } = fakeBinding();
		await ep.start(async () => ({ binding }));
		await ep.stop();
		await ep.stop();
		expect(state.stops).toBe(1);
		expect(ep.running).toBeNull();
	});

	test("failing open -> every concurrent caller gets the error, a later start tries again", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const gate = deferred<{ binding: Binding }>();
		const a = ep.start(() => gate.promise);
		const b = ep.start(() => gate.promise);
		gate.reject(new Error("bind failed"));
		await expect(a).rejects.toThrow("bind failed");
		await expect(b).rejects.toThrow("bind failed");
		expect(ep.running).toBeNull();
		const r = { binding: fakeBinding().binding };
		expect(await ep.start(async () => r)).toBe(r);
	});

	test("stop() during an open that fails -> resolves, nothing running", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const gate = deferred<{ binding: Binding }>();
		const starting = ep.start(() => gate.promise).catch(e => e);
		const stopping = ep.stop();
		gate.reject(new Error("bind failed"));
		await stopping;
		expect(await starting).toBeInstanceOf(Error);
		expect(ep.running).toBeNull();
	});

	test("start after a stop that interrupted a start -> binds normally", async () => {
		const ep = new Endpoint<{ binding: Binding }>();
		const gate = deferred<{ binding: Binding }>();
		const first = ep.start(() => gate.promise);
		const stopping = ep.stop();
		gate.resolve({ binding: fakeBinding().binding });
		await stopping;
		await first;
		const r = { binding: fakeBinding().binding };
		expect(await ep.start(async () => r)).toBe(r);
		expect(ep.running).toBe(r);
	});
});

describe("bindBun", () => {
	const ok = async () => new Response("ok");

	test("port 0 -> a random port that answers fetch", async () => {
		const { binding, fallbackFrom } = bindBun(ok, "127.0.0.1", 0);
		cleanups.push(() => binding.server.stop(true));
		expect(fallbackFrom).toBeUndefined();
		expect(binding.port).toBeGreaterThan(0);
		const res = await fetch(`http://127.0.0.1:${binding.port}/`);
		expect(res.status).toBe(200);
		expect(await res.text()).toBe("ok");
	});

	test("handler gets the request and its connection handle", async () => {
		const seen: Array<{ path: string; hasServer: boolean }> = [];
		const { binding } = bindBun(
			async (req, conn) => {
				seen.push({ path: new URL(req.url).pathname, hasServer: typeof conn.holdOpen === "function" });
				return new Response("x");
			},
			"127.0.0.1",
			0,
		);
		cleanups.push(() => binding.server.stop(true));
		await (await fetch(`http://127.0.0.1:${binding.port}/mcp`)).text();
		expect(seen).toEqual([{ path: "/mcp", hasServer: true }]);
	});

	test("busy port -> falls back to a random port, reports fallbackFrom", async () => {
		const occupant = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("occupant") });
		cleanups.push(() => occupant.stop(true));
		const busy = occupant.port as number;
		const { binding, fallbackFrom } = bindBun(ok, "127.0.0.1", busy);
		cleanups.push(() => binding.server.stop(true));
		expect(fallbackFrom).toBe(busy);
		expect(binding.port).not.toBe(busy);
		expect(binding.port).toBeGreaterThan(0);
		expect(await (await fetch(`http://127.0.0.1:${binding.port}/`)).text()).toBe("ok");
	});

	test("free non-zero port -> bound there, no fallback", async () => {
		const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
		const port = probe.port as number;
		probe.stop(true);
		const { binding, fallbackFrom } = bindBun(ok, "127.0.0.1", port);
		cleanups.push(() => binding.server.stop(true));
		expect(fallbackFrom).toBeUndefined();
		expect(binding.port).toBe(port);
	});

	test("stop() -> graceful: a request already in flight completes with 200", async () => {
		const entered = deferred();
		const { binding } = bindBun(
			async () => {
				entered.resolve();
				await Bun.sleep(300);
				return new Response("finished");
			},
			"127.0.0.1",
			0,
		);
		let stopped = false;
		cleanups.push(() => (stopped ? undefined : binding.server.stop(true)));
		const inFlight = fetch(`http://127.0.0.1:${binding.port}/`);
		await entered.promise;
		const stopping = binding.stop();
		const res = await inFlight;
		expect(res.status).toBe(200);
		expect(await res.text()).toBe("finished");
		await stopping;
		stopped = true;
	});

	test("after stop() resolves -> new connections are refused", async () => {
		const { binding } = bindBun(ok, "127.0.0.1", 0);
		await binding.stop();
		await expect(fetch(`http://127.0.0.1:${binding.port}/`)).rejects.toThrow();
	});
});
