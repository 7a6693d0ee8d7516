/**
 * Host fact `approval-gate`, its behavioural half (src/host/gate-check.ts): a listed tool's gate class is tried
 * around a canary set to prompt. A class that runs the canary unasked (omp 18.1.16's gate did so for a call with
 * no context), that never answers, or that refuses without asking fails; omp's own class passes. Per call the
 * bridge refuses a tool whose class failed; the probe names the fact once the trial has ended.
 */
import { describe, expect, test } from "bun:test";
import { ExtensionToolWrapper } from "@oh-my-pi/pi-coding-agent/extensibility/extensions/wrapper";
import { checkHost } from "../../../src/host/facts-probe.ts";
import { gateFor, gateShapeWhy } from "../../../src/host/gate-check.ts";
import { fakeHost, type Obj } from "../../helpers/fact-host.ts";
import { bridgeOver, callReq } from "../../helpers/gate.ts";

type Runner = { sessionSettings?: unknown; getUIContext(): unknown };

/** A gate class of the right shape whose execute does `behave` with the gated tool. */
function gateClass(behave: (tool: { execute(...a: unknown[]): Promise<unknown> }, runner: Runner) => Promise<unknown>) {
	return class {
		constructor(
			readonly tool: { name?: string; execute(...a: unknown[]): Promise<unknown> },
			readonly runner: Runner,
		) {}
		execute(): Promise<unknown> {
			return behave(this.tool, this.runner);
		}
	};
}

/** A fake Main whose `bash` is an instance of `Cls` around a tool that records each run. */
function mainWith(Cls: new (t: never, r: never) => object) {
	const h = fakeHost();
	const ran: string[] = [];
	const runner = h.session.extensionRunner as Runner;
	const inner = {
		name: "bash",
		execute: async () => {
			ran.push("bash");
			return { content: [] };
		},
	};
	h.tools.bash = Object.assign(new Cls(inner as never, runner as never), {
		name: "bash",
		parameters: { type: "object" },
		formatApprovalDetails: () => [],
	});
	return { h, ran };
}

describe("approval-gate trial", () => {
	test("omp's own gate class passes: the canary is asked about, never run", async () => {
		const h = fakeHost();
		const runner = h.session.extensionRunner;
		const real = new (ExtensionToolWrapper as unknown as new (t: unknown, r: unknown) => Obj)(
			{ name: "read", execute: async () => ({ content: [] }) },
			runner,
		);
		// omp 18.2.3 takes Main's settings from the runner: the call goes with no context.
		expect(await gateFor(real, h.session)).toEqual({ context: undefined, execute: expect.any(Function) });
	});

	const failing: Array<[string, ReturnType<typeof gateClass>, string]> = [
		["runs the tool without asking, with or without a context", gateClass(t => t.execute()), "ran a trial call"],
		[
			"refuses without asking",
			gateClass(async () => Promise.reject(new Error("no"))),
			"refused without asking under always-ask",
		],
		["never answers", gateClass(() => new Promise(() => {})), "no answer in 2 s"],
	];
	for (const [what, Cls, said] of failing) {
		test(`a class that ${what}: the call is refused and nothing ran; the probe then names the fact`, async () => {
			const { h, ran } = mainWith(Cls);
			// Before the trial has ended the probe has only the shape; the per-call check waits for the trial.
			expect(gateShapeWhy(h.tools.bash, h.session)).toBe("");
			const out = await bridgeOver(h).callTool(callReq("bash", { command: "id" }));
			expect({ refused: out.refused, ran }).toEqual({ refused: true, ran: [] });
			const lines: string[] = [];
			const gate = checkHost({ registry: h.registry, ai: h.ai }, l => lines.push(l)).find(
				c => c.fact === "approval-gate",
			);
			expect(gate?.ok).toBe(false);
			expect(gate?.why).toContain(said);
			expect(lines.filter(l => l.includes("'approval-gate'"))).toHaveLength(1);
		}, 10_000);
	}

	test("a gate that asks only when the call's context carries the settings (omp before 18.2.1): calls go with Main's settings as the context", async () => {
		const seen: unknown[] = [];
		const Cls = gateClass(async () => {}); // execute replaced below: it reads the context
		const OldGate = class extends Cls {
			override execute(...a: unknown[]): Promise<unknown> {
				const context = a[4] as { settings?: { get(k: string): unknown } } | undefined;
				seen.push(context);
				// omp 18.1.16's reading: mode and policies from the context only, yolo without one.
				const mode = context?.settings?.get("tools.approvalMode") ?? "yolo";
				const policy = (context?.settings?.get("tools.approval") as Obj | undefined)?.[this.tool.name ?? ""];
				if (policy === "deny") return Promise.reject(new Error("blocked by user policy"));
				const runner = this.runner as {
					getUIContext(): { select(t: string, o: string[]): Promise<string> } | undefined;
				};
				if (mode !== "always-ask" && policy !== "prompt") return this.tool.execute(...a);
				const ui = runner.getUIContext();
				return (ui?.select("Allow tool", ["Approve", "Deny"]) ?? Promise.resolve("Deny")).then(c =>
					c === "Approve" ? this.tool.execute(...a) : Promise.reject(new Error("Tool call denied by user")),
				);
			}
		};
		const { h, ran } = mainWith(OldGate);
		(h.session.settings as Obj).get = (k: string) => (k === "tools.approvalMode" ? "always-ask" : undefined);
		expect(await gateFor(h.tools.bash, h.session)).toEqual({
			context: { settings: h.session.settings },
			execute: expect.any(Function),
		});
		seen.length = 0;
		const asked: string[] = [];
		const ui = {
			select: async (t: string) => {
				asked.push(t);
				return "Deny";
			},
		};
		(h.session.extensionRunner as Obj).getUIContext = () => ui;
		const ended = new AbortController().signal;
		const out = await bridgeOver(h).callTool({
			...callReq("bash", { command: "id" }),
			take: kind => ({ ok: true, slot: { kind, tokenName: "owner", ended, release() {} } }),
		});
		// Main's always-ask reached the gate through the context: it asked, Deny refused, nothing ran.
		expect({ error: out.isError, asked: asked.length, ran, context: seen[0] }).toEqual({
			error: true,
			asked: 1,
			ran: [],
			context: { settings: h.session.settings },
		});
	});

	test("a failed trial found after the start makes a new probe, said once on stderr", async () => {
		const { h } = mainWith(gateClass(t => t.execute()));
		const lines: string[] = [];
		const first = checkHost({ registry: h.registry, ai: h.ai }, l => lines.push(l));
		expect(first.filter(c => !c.ok)).toEqual([]);
		await Bun.sleep(50);
		expect(lines.filter(l => l.includes("host fact 'approval-gate' missing"))).toHaveLength(1);
	});
});
