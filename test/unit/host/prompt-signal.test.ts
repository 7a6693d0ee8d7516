import { describe, expect, test } from "bun:test";
import { parseApprovalTitle } from "../../../src/headless/frames.ts";
import { lendCallSignal, type PromptUi, withCallSignal } from "../../../src/host/prompt-signal.ts";
import { promptLabel } from "../../../src/host/remote-calls.ts";

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
		await withCallSignal(ac.signal, async () => {
			await Bun.sleep(1);
			await ui.select("Allow tool: bash", ["Approve", "Deny"]);
		});
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
		await withCallSignal(new AbortController().signal, () => ui.select("t", [], { signal: own }));
		expect(ui.seen).toEqual([own]);
	});
	test("wrapping twice wraps once; concurrent calls each see their own signal", async () => {
		const ui = fakeUi();
		lendCallSignal(ui);
		lendCallSignal(ui);
		const a = new AbortController();
		const b = new AbortController();
		await Promise.all([
			withCallSignal(a.signal, async () => {
				await Bun.sleep(5);
				await ui.select("a", []);
			}),
			withCallSignal(b.signal, () => ui.select("b", [])),
		]);
		expect(ui.seen).toEqual([b.signal, a.signal]);
	});
});

describe("the remote call's label in the prompt", () => {
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
	test("a select inside a labelled call ends with the label; outside, or unlabelled, the title is as the host made it", async () => {
		const ui = titles();
		lendCallSignal(ui);
		const label = promptLabel({ tokenName: "ci", client: "claude-code" });
		await withCallSignal(new AbortController().signal, () => ui.select("Allow tool: bash\nCommand: make", []), label);
		await withCallSignal(new AbortController().signal, () => ui.select("Allow tool: read", []));
		await ui.select("Allow tool: write", []);
		expect(ui.seen).toEqual([
			"Allow tool: bash\nCommand: make\nRemote call (A2A): token ci, client claude-code",
			"Allow tool: read",
			"Allow tool: write",
		]);
	});
	test("the headless host reads it back: tool, details and caller, the label line removed", () => {
		const title = `Allow tool: bash\nCommand: make\n${promptLabel({ tokenName: "ci", client: "a, b (c)" })}`;
		expect(parseApprovalTitle(title)).toEqual({
			tool: "bash",
			details: ["Command: make"],
			caller: { tokenName: "ci", client: "a, b (c)" },
		});
		expect(parseApprovalTitle(`Allow tool: read\n${promptLabel({ tokenName: "owner", client: null })}`)).toEqual({
			tool: "read",
			details: [],
			caller: { tokenName: "owner", client: null },
		});
		// A label-like line that is not last is a detail, not a caller (e.g. inside a command).
		expect(parseApprovalTitle("Allow tool: bash\nRemote call (A2A): token x\nCommand: y").caller).toBe(undefined);
	});
});
