import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { TOKEN_NAME } from "../../../src/config/tokens.ts";
import { queueEnv, TOKEN_NAME_RE } from "../../../src/headless/queue-command.ts";
import {
	DEFAULT_BOUNDS,
	DENIED,
	ENV_QUEUE,
	ENV_WAIT,
	MAX_WAITING,
	PromptQueue,
	QueueRefusal,
	queueBoundsFromEnv,
} from "../../../src/host/prompt-queue.ts";
import { manualClock } from "../../helpers/clock.ts";
import { promptSlots } from "../../helpers/prompt-slots.ts";

/** A host UI that records each dialog it opens and answers when the test says so. */
function fakeHost() {
	const open: Array<{ label: string; signal: AbortSignal; answer(v: unknown): void }> = [];
	const shown: string[] = [];
	const opener = (label: string) => (signal: AbortSignal) =>
		new Promise(resolve => {
			shown.push(label);
			const entry = { label, signal, answer: resolve };
			open.push(entry);
			// Like the host: an aborted dialog closes with no choice.
			const close = () => {
				open.splice(open.indexOf(entry) >>> 0, open.includes(entry) ? 1 : 0);
				resolve(undefined);
			};
			if (signal.aborted) close();
			else signal.addEventListener("abort", close, { once: true });
		});
	/** Answers the dialog on screen and lets the queue show the next. */
	const answer = async (v: unknown = "Approve") => {
		const cur = open.shift();
		cur?.answer(v);
		await flush();
		return cur?.label;
	};
	return { open, shown, opener, answer };
}

const flush = async () => {
	for (let i = 0; i < 5; i++) await Promise.resolve();
	await Bun.sleep(0);
};

/** Prompts waiting in `q`, all tokens together. */
const waitingIn = (q: PromptQueue): number => q.snapshot().waiting.reduce((n, [, k]) => n + k, 0);

type Settled = { label: string; how: "answer" | "denied" | "refused" | "failed"; value: unknown };

/** Asks through `q`, each prompt waiting in a slot of a real registry bounding `perToken` (core/holdings.ts). */
function asker(q: PromptQueue, host: ReturnType<typeof fakeHost>, settled: Settled[], slots = promptSlots(8)) {
	return (token: string, label: string, signal = new AbortController().signal) =>
		q.run(token, signal, host.opener(label), slots.owner(token).take).then(
			v => settled.push({ label, how: v === DENIED ? "denied" : "answer", value: v }),
			e => settled.push({ label, how: e instanceof QueueRefusal ? "refused" : "failed", value: (e as Error).message }),
		);
}

describe("prompt queue: one dialog at a time, turns round-robin across tokens (contract §19)", () => {
	test("token B's prompt is shown before token A's 2nd, and three tokens alternate", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const ask = asker(new PromptQueue(60_000, manualClock()), host, settled, promptSlots(8));
		for (let i = 1; i <= 5; i++) ask("a", `a${i}`);
		await flush();
		ask("b", "b1");
		ask("c", "c1");
		ask("b", "b2");
		await flush();
		expect(host.shown).toEqual(["a1"]);
		while (host.open.length > 0) await host.answer();
		expect(host.shown).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4", "a5"]);
		expect(host.shown.indexOf("b1")).toBeLessThan(host.shown.indexOf("a5"));
		expect(settled.every(s => s.how === "answer" && s.value === "Approve")).toBe(true);
	});

	test("over the bound: the 4th waiting prompt of a token is refused at once, clearly, and never shown", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const slots = promptSlots(3);
		const q = new PromptQueue(60_000, manualClock());
		const ask = asker(q, host, settled, slots);
		for (let i = 1; i <= 5; i++) ask("a", `a${i}`);
		ask("b", "b1");
		await flush();
		expect(settled.map(s => [s.label, s.how])).toEqual([["a5", "refused"]]);
		expect(String(settled[0]?.value)).toMatch(/approval queue full: token 'a' already has 3 prompts waiting/);
		expect(String(settled[0]?.value)).toContain("did not run and was not denied");
		while (host.open.length > 0) await host.answer();
		expect(host.shown).toEqual(["a1", "b1", "a2", "a3", "a4"]);
	});

	test("deny-queue: the token's shown and waiting prompts answer DENIED, the dialog closes, others untouched", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const slots = promptSlots(3);
		const q = new PromptQueue(60_000, manualClock());
		const ask = asker(q, host, settled, slots);
		for (let i = 1; i <= 4; i++) ask("a", `a${i}`);
		ask("b", "b1");
		await flush();
		const dialog = host.open[0];
		expect(q.denyToken("a")).toBe(4);
		await flush();
		expect(dialog?.signal.aborted).toBe(true);
		expect(settled.map(s => [s.label, s.how])).toEqual([
			["a2", "denied"],
			["a3", "denied"],
			["a4", "denied"],
			["a1", "denied"],
		]);
		expect(host.shown).toEqual(["a1", "b1"]);
		expect(q.denyToken("a")).toBe(0);
		await host.answer();
		expect(settled.at(-1)).toEqual({ label: "b1", how: "answer", value: "Approve" });
		expect(q.snapshot()).toEqual({ shown: undefined, waiting: [] });
	});

	test("issue 38.8: the registry bounds waiting prompts: its refusal is the queue's text, and a freed slot is taken again", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const slots = promptSlots(2);
		const q = new PromptQueue(60_000, manualClock());
		const ask = asker(q, host, settled, slots);
		for (let i = 1; i <= 4; i++) ask("a", `a${i}`);
		await flush();
		// a1 on screen holds no slot; a2, a3 hold the token's 2; a4 is refused by the registry.
		expect(settled.map(s => [s.label, s.how])).toEqual([["a4", "refused"]]);
		expect(String(settled[0]?.value)).toContain("approval queue full: token 'a' already has 2 prompts waiting");
		// Second channel: the registry itself refuses a third prompts slot of 'a' and gives one to 'b'.
		const third = slots.reg.take("prompts", { tokenName: "a" });
		expect(third).toMatchObject({ ok: false, code: "share", held: 2 });
		expect(slots.reg.take("prompts", { tokenName: "b" }).ok).toBe(true);
		await host.answer();
		ask("a", "a5");
		await flush();
		expect(settled.map(s => s.label)).toEqual(["a4", "a1"]);
		expect(q.snapshot().waiting).toEqual([["a", 2]]);
	});

	test("issue 38.8: revocation ends waiting prompts through the registry's endToken (refused as revoked, never shown)", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const slots = promptSlots(3);
		const q = new PromptQueue(60_000, manualClock());
		const ask = asker(q, host, settled, slots);
		ask("a", "a1");
		ask("a", "a2");
		ask("a", "a3");
		ask("b", "b1");
		await flush();
		// a1 is on screen (its call's own slot closes it); a2 and a3 wait in prompts slots.
		expect(slots.reg.endToken("a", "its token was revoked or rotated")).toBe(2);
		await flush();
		expect(settled.map(s => [s.label, s.how])).toEqual([
			["a2", "refused"],
			["a3", "refused"],
		]);
		expect(String(settled[0]?.value)).toContain("token 'a' was revoked");
		expect(q.snapshot().waiting).toEqual([["b", 1]]);
		await host.answer();
		expect(host.shown).toEqual(["a1", "b1"]);
	});

	test("a waiting prompt ends on its call's cancellation and on the wait bound; neither is ever shown", async () => {
		const host = fakeHost();
		const settled: Settled[] = [];
		const clock = manualClock();
		const slots = promptSlots(3);
		const q = new PromptQueue(60_000, clock);
		const ask = asker(q, host, settled, slots);
		const cancel = new AbortController();
		ask("a", "a1");
		ask("b", "b1", cancel.signal);
		await flush();
		cancel.abort();
		await flush();
		expect(settled).toEqual([
			{ label: "b1", how: "failed", value: "the call was cancelled while its approval prompt waited for its turn" },
		]);
		ask("c", "c1");
		clock.advance(59_999);
		await flush();
		expect(settled).toHaveLength(1);
		clock.advance(1);
		await flush();
		expect(settled[1]).toMatchObject({ label: "c1", how: "refused" });
		expect(String(settled[1]?.value)).toContain("no turn at the host's approver within 60 s");
		await host.answer();
		expect(host.shown).toEqual(["a1"]);
		expect(clock.pending()).toBe(0);
		expect(waitingIn(q)).toBe(0);
	});

	test("an already cancelled call never waits; a dialog that throws fails only its own call", async () => {
		const q = new PromptQueue(60_000, manualClock());
		const { take } = promptSlots(3).owner("a");
		const ac = new AbortController();
		ac.abort();
		await expect(q.run("a", ac.signal, () => "x", take)).rejects.toThrow(/cancelled/);
		await expect(
			q.run(
				"a",
				new AbortController().signal,
				() => {
					throw new Error("ui gone");
				},
				take,
			),
		).rejects.toThrow("ui gone");
		await expect(q.run("a", new AbortController().signal, () => "Deny", take)).resolves.toBe("Deny");
	});

	test("all tokens together are bounded too", async () => {
		const host = fakeHost();
		const q = new PromptQueue(60_000, manualClock());
		const slots = promptSlots(256);
		const errors: unknown[] = [];
		q.run("x", new AbortController().signal, host.opener("shown"), slots.owner("x").take).catch(() => {});
		for (let i = 0; i <= MAX_WAITING; i++)
			q.run(`t${i % 8}`, new AbortController().signal, host.opener(`${i}`), slots.owner(`t${i % 8}`).take).catch(e =>
				errors.push(e),
			);
		await flush();
		expect(waitingIn(q)).toBe(MAX_WAITING);
		expect(errors).toHaveLength(1);
		expect(String(errors[0])).toContain(`${MAX_WAITING} prompts wait`);
		q.denyToken("x");
		for (let i = 0; i < 8; i++) q.denyToken(`t${i}`);
		expect(waitingIn(q)).toBe(0);
	});
});

describe("prompt queue: generated interleavings (fast-check)", () => {
	type Op =
		| { kind: "ask"; token: number; n: number }
		| { kind: "answer" }
		| { kind: "cancel"; pick: number }
		| { kind: "deny"; token: number }
		| { kind: "end"; token: number }
		| { kind: "tick"; ms: number };
	const opArb: fc.Arbitrary<Op> = fc.oneof(
		// A burst: one token asking several times at once, as a client with parallel calls does.
		{
			arbitrary: fc.record({ kind: fc.constant("ask" as const), token: fc.nat(3), n: fc.integer({ min: 1, max: 5 }) }),
			weight: 6,
		},
		{ arbitrary: fc.record({ kind: fc.constant("answer" as const) }), weight: 4 },
		fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat(40) }),
		fc.record({ kind: fc.constant("deny" as const), token: fc.nat(3) }),
		fc.record({ kind: fc.constant("end" as const), token: fc.nat(3) }),
		fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 1, max: 40_000 }) }),
	);

	test("one dialog at most; no token is served twice while another waits; nothing leaks", async () => {
		await fc.assert(
			fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), async (ops, perToken) => {
				const host = fakeHost();
				const clock = manualClock();
				const q = new PromptQueue(60_000, clock);
				// As the server wires it: each call holds a calls slot (its end aborts the call) and its waiting prompt a prompts slot.
				const slots = promptSlots(perToken);
				const calls: Array<{ token: string; ac: AbortController; done: boolean }> = [];
				/** The tokens each waiting token saw served since it began waiting: round-robin serves none twice. */
				const passed = new Map<string, Set<string>>();
				const unfair: string[] = [];
				let seq = 0;
				const onShown = (token: string) => {
					for (const [t] of q.snapshot().waiting) {
						if (t === token) continue;
						const seen = passed.get(t) ?? new Set<string>();
						if (seen.has(token)) unfair.push(`${token} served twice while ${t} waited`);
						passed.set(t, seen.add(token));
					}
					passed.delete(token);
				};
				for (const op of ops) {
					for (let i = 0; op.kind === "ask" && i < op.n; i++) {
						const token = `t${op.token}`;
						const call = { token, ac: new AbortController(), done: false };
						calls.push(call);
						const held = slots.reg.take("calls", { tokenName: token }, () => call.ac.abort());
						const label = `${token}#${seq++}`;
						q.run(
							token,
							call.ac.signal,
							s => {
								onShown(token);
								return host.opener(label)(s);
							},
							slots.owner(token).take,
						)
							.catch(() => {})
							.finally(() => {
								call.done = true;
								if (held.ok) held.slot.release();
							});
					}
					if (op.kind === "answer") await host.answer();
					else if (op.kind === "cancel") calls.filter(c => !c.done)[op.pick % Math.max(1, calls.length)]?.ac.abort();
					else if (op.kind === "deny") q.denyToken(`t${op.token}`);
					else if (op.kind === "end") slots.reg.endToken(`t${op.token}`, "revoked");
					else if (op.kind === "tick") clock.advance(op.ms);
					await flush();
					expect(host.open.length).toBeLessThanOrEqual(1);
					expect(unfair).toEqual([]);
					const waiting = new Set(q.snapshot().waiting.map(([t]) => t));
					for (const t of passed.keys()) if (!waiting.has(t)) passed.delete(t);
					for (const [, n] of q.snapshot().waiting) expect(n).toBeLessThanOrEqual(perToken);
				}
				// Drain: every call settles, and the queue holds nothing, no timer, no listener-held prompt.
				for (let i = 0; i < 200 && (host.open.length > 0 || waitingIn(q) > 0); i++) await host.answer();
				expect(calls.every(c => c.done)).toBe(true);
				expect(q.snapshot()).toEqual({ shown: undefined, waiting: [] });
				expect(clock.pending()).toBe(0);
				// Every prompts slot went back to the registry: each token can take its whole bound again.
				for (let t = 0; t < 4; t++)
					for (let i = 0; i < perToken; i++) expect(slots.reg.take("prompts", { tokenName: `x${t}` }).ok).toBe(true);
			}),
			{ numRuns: 150 },
		);
	});
});

describe("queue bounds: the environment `npm run host` sets (hostile values keep the default)", () => {
	test("good values; the headless host's names and token-name pattern are the bridge's", () => {
		const env = queueEnv({ approvalQueue: 5, approvalTimeoutMs: 2500 });
		expect(Object.keys(env).sort()).toEqual([ENV_QUEUE, ENV_WAIT].sort());
		expect(queueBoundsFromEnv(env)).toEqual({ bounds: { perToken: 5, maxWaitMs: 2500 }, warnings: [] });
		expect(queueBoundsFromEnv({})).toEqual({ bounds: DEFAULT_BOUNDS, warnings: [] });
		expect(TOKEN_NAME_RE.source).toBe(TOKEN_NAME.source);
	});
	for (const bad of ["", "0", "-1", "257", "1e2", "3.5", " 3", "0x3", "9999999", "NaN", "Infinity"]) {
		test(`${ENV_QUEUE}=${JSON.stringify(bad)} -> default and a warning`, () => {
			const r = queueBoundsFromEnv({ [ENV_QUEUE]: bad });
			expect(r.bounds.perToken).toBe(DEFAULT_BOUNDS.perToken);
			expect(r.warnings).toHaveLength(1);
		});
	}
	for (const bad of ["", "0", "-5", "86401", "1e3", "Infinity", "NaN", "60s", "0.0001"]) {
		test(`${ENV_WAIT}=${JSON.stringify(bad)} -> default and a warning`, () => {
			const r = queueBoundsFromEnv({ [ENV_WAIT]: bad });
			expect(r.bounds.maxWaitMs).toBe(DEFAULT_BOUNDS.maxWaitMs);
			expect(r.warnings).toHaveLength(1);
		});
	}
});
