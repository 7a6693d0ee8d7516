import { describe, expect, test } from "bun:test";
import { processPromptQueue } from "../../../src/host/prompt-queue.ts";
import { lendCallSignal, type PromptUi, withCallSignal } from "../../../src/host/prompt-signal.ts";
import { promptSlots } from "../../helpers/prompt-slots.ts";

/** A host UI whose dialogs stay open until the test answers them. */
function heldUi() {
	const open: Array<{ title: string; signal?: AbortSignal; answer(v: unknown): void }> = [];
	const ui: PromptUi = {
		select(title, _options, opts) {
			return new Promise(resolve => {
				const entry = { title, signal: opts?.signal, answer: resolve };
				open.push(entry);
				opts?.signal?.addEventListener("abort", () => resolve(undefined), { once: true });
			});
		},
	};
	lendCallSignal(ui);
	return { ui, open };
}
const flush = () => Bun.sleep(1);

const { owner } = promptSlots();

describe("the select wrapper takes turns in the process's prompt queue (issue 38 item 7)", () => {
	test("a second remote call's dialog opens only when the first closes; deny-queue answers Deny to approvals", async () => {
		const { ui, open } = heldUi();
		const first = withCallSignal(new AbortController().signal, () => ui.select("t1", ["Approve", "Deny"]), owner("ci"));
		const second = withCallSignal(
			new AbortController().signal,
			() => ui.select("t2", ["Approve", "Deny"]),
			owner("ci"),
		);
		const other = withCallSignal(new AbortController().signal, () => ui.select("pick", ["x", "y"]), owner("ci"));
		await flush();
		expect(open.map(o => o.title)).toEqual(["t1"]);
		expect(processPromptQueue().denyToken("ci")).toBe(3);
		expect(await first).toBe("Deny");
		expect(await second).toBe("Deny");
		// A dialog that is not an approval closes with no choice, as the host's own abort does.
		expect(await other).toBeUndefined();
		expect(open[0]?.signal?.aborted).toBe(true);
	});

	test("over the bound the call's select throws the queue's refusal, which the host passes through", async () => {
		const { ui, open } = heldUi();
		const q = processPromptQueue();
		// The bound is the registry's (core/holdings.ts): 1 waiting per token here.
		const { owner } = promptSlots(1);
		q.configure(60_000);
		try {
			const ask = () =>
				withCallSignal(new AbortController().signal, () => ui.select("t", ["Approve", "Deny"]), owner("x"));
			const shown = ask();
			const waiting = ask();
			const refused = ask() as Promise<unknown>;
			await expect(refused).rejects.toMatchObject({ name: "QueueRefusal" });
			await flush();
			open[0]?.answer("Approve");
			expect(await shown).toBe("Approve");
			await flush();
			open[1]?.answer("Deny");
			expect(await waiting).toBe("Deny");
		} finally {
			q.configure(600_000);
		}
	});

	test("a dialog outside any remote call does not queue", async () => {
		const { ui, open } = heldUi();
		const inCall = withCallSignal(
			new AbortController().signal,
			() => ui.select("remote", ["Approve", "Deny"]),
			owner("q"),
		);
		const local = ui.select("local", ["Approve", "Deny"]);
		await flush();
		expect(open.map(o => o.title).sort()).toEqual(["local", "remote"]);
		open.find(o => o.title === "local")?.answer("Approve");
		open.find(o => o.title === "remote")?.answer("Approve");
		expect([await local, await inCall]).toEqual(["Approve", "Approve"]);
	});
});
