import { describe, expect, test } from "bun:test";
import { lendCallSignal, type PromptUi, withCallSignal } from "../../../src/host/prompt-signal.ts";
import { promptSlots } from "../../helpers/prompt-slots.ts";

const { owner } = promptSlots();

function fakeUi(): PromptUi & { seen: Array<AbortSignal | undefined> } {
	const seen: Array<AbortSignal | undefined> = [];
	return {
		seen,
		select(_title, _options, opts) {
			seen.push(opts?.signal);
			return Promise.resolve("Approve");
		},
	};
}

describe("lendCallSignal", () => {
	test("a select opened inside a call gets the call's signal, also after awaits", async () => {
		const ui = fakeUi();
		lendCallSignal(ui);
		const ac = new AbortController();
		await withCallSignal(
			ac.signal,
			async () => {
				await Bun.sleep(1);
				await ui.select("Allow tool: bash", ["Approve", "Deny"]);
			},
			owner(),
		);
		expect(ui.seen).toEqual([ac.signal]);
	});
	test("a select outside any call is left alone", async () => {
		const ui = fakeUi();
		lendCallSignal(ui);
		await ui.select("t", []);
		expect(ui.seen).toEqual([undefined]);
	});
	test("a dialog's own signal wins", async () => {
		const ui = fakeUi();
		lendCallSignal(ui);
		const own = new AbortController().signal;
		await withCallSignal(new AbortController().signal, () => ui.select("t", [], { signal: own }), owner());
		expect(ui.seen).toEqual([own]);
	});
	test("wrapping twice wraps once; concurrent calls each see their own signal", async () => {
		const ui = fakeUi();
		lendCallSignal(ui);
		lendCallSignal(ui);
		const a = new AbortController();
		const b = new AbortController();
		await Promise.all([
			withCallSignal(
				a.signal,
				async () => {
					await Bun.sleep(5);
					await ui.select("a", []);
				},
				owner(),
			),
			withCallSignal(b.signal, () => ui.select("b", []), owner()),
		]);
		expect(ui.seen).toEqual([b.signal, a.signal]);
	});
});

describe("the remote call's dialogs are titled by the call (contract §19)", () => {
	function titles(): PromptUi & { seen: string[] } {
		const seen: string[] = [];
		return {
			seen,
			select(title) {
				seen.push(title);
				return Promise.resolve("Deny");
			},
		};
	}
	test("inside a call the call's retitle decides the title (given the options); outside, the host's stays", async () => {
		const ui = titles();
		lendCallSignal(ui);
		const retitle = (title: string, options: readonly unknown[]) => `${options.join("/")}: ${title.length}`;
		await withCallSignal(
			new AbortController().signal,
			() => ui.select("Allow tool: bash\nCommand: make", ["Approve", "Deny"]),
			owner(),
			retitle,
		);
		await withCallSignal(new AbortController().signal, () => ui.select("Allow tool: read", []), owner());
		await ui.select("Allow tool: write", []);
		expect(ui.seen).toEqual(["Approve/Deny: 30", "Allow tool: read", "Allow tool: write"]);
	});
	test("a retitle that throws never lets the host's raw lines through: one exactly-shown line", async () => {
		const ui = titles();
		lendCallSignal(ui);
		const boom = () => {
			throw new Error("x");
		};
		await withCallSignal(
			new AbortController().signal,
			() => ui.select("Allow tool: bash\nCommand: a\nb", []),
			owner(),
			boom,
		);
		expect(ui.seen).toEqual(["Allow tool: bash\\nCommand: a\\nb"]);
	});
});
