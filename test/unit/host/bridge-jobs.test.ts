import { describe, expect, test } from "bun:test";
import {
	backgroundedJobId,
	type HostAccess,
	HostBridge,
	type HostJobManager,
	textOf,
} from "../../../src/host/bridge.ts";
import { behindGate, GATE_RUNNER } from "../../helpers/gate.ts";
import { waitFor } from "../../helpers/wait.ts";

function fakeJobs(job: { status: string; resultText?: string; errorText?: string }, settle: Promise<void>) {
	const calls: string[] = [];
	const jobs: HostJobManager = {
		acknowledgeDeliveries: ids => {
			calls.push(`ack:${ids.join()}`);
			return 0;
		},
		consumeJobResults: ids => {
			calls.push(`consume:${ids.join()}`);
			return 1;
		},
		// The host hands out the live job row: its status changes as the job settles.
		getJob: () => Object.assign(job, { promise: settle }),
		cancel: id => {
			calls.push(`cancel:${id}`);
			return true;
		},
	};
	return { jobs, calls };
}

function bridgeWith(jobs: HostJobManager): HostBridge {
	const stub = {
		content: [{ type: "text", text: "Backgrounded as job bg_1; result will be delivered automatically." }],
		details: { async: { state: "running", jobId: "bg_1", type: "bash" } },
	};
	const host: HostAccess = {
		mainSession: () => ({
			getAllToolNames: () => ["bash"],
			getToolByName: () => behindGate({ name: "bash", execute: async () => stub }),
			extensionRunner: GATE_RUNNER,
			asyncJobManager: jobs,
		}),
		fallbackTools: () => [],
		wireSchema: () => ({ type: "object" }),
		log: () => {},
	};
	return new HostBridge(host);
}

const req = (signal: AbortSignal, onBackgrounded?: () => void) => ({
	callId: "c1",
	name: "bash",
	args: { command: "sleep 99" },
	signal,
	caller: { sid: "s1", tokenName: "owner", client: null },
	take: () => ({ ok: false as const, code: "all" as const, why: "no registry in this test", held: 0 }),
	...(onBackgrounded ? { onBackgrounded } : {}),
});

describe("backgroundedJobId", () => {
	test("running async details -> the job id", () => {
		expect(backgroundedJobId({ details: { async: { state: "running", jobId: "bg_3" } } })).toBe("bg_3");
	});
	test("completed, missing or malformed details -> null", () => {
		expect(backgroundedJobId({ details: { async: { state: "completed", jobId: "bg_3" } } })).toBeNull();
		expect(backgroundedJobId({})).toBeNull();
		expect(backgroundedJobId(undefined)).toBeNull();
		expect(backgroundedJobId({ details: { async: { state: "running", jobId: 3 } } })).toBeNull();
	});
});

describe("textOf", () => {
	test("joins text blocks and skips others", () => {
		expect(textOf([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }])).toBe("a\nb");
		expect(textOf(undefined)).toBe("");
	});
});

describe("background-job takeover", () => {
	test("stub -> delivery acknowledged, real output returned, result consumed, caller told", async () => {
		const job = { status: "running", resultText: "" };
		let settle = () => {};
		const { jobs, calls } = fakeJobs(job, new Promise<void>(r => (settle = r)));
		const bridge = bridgeWith(jobs);
		let told = 0;
		const pending = bridge.callTool(req(new AbortController().signal, () => told++));
		await waitFor("the stub's delivery acknowledged", () => calls.length > 0, { timeoutMs: 5000 });
		expect(calls).toEqual(["ack:bg_1"]);
		Object.assign(job, { status: "completed", resultText: "real output" });
		settle();
		const out = await pending;
		expect(out).toEqual({ content: [{ type: "text", text: "real output" }], isError: false });
		expect(calls).toEqual(["ack:bg_1", "consume:bg_1"]);
		expect(told).toBe(1);
	});

	test("failed job -> isError with its error text", async () => {
		const job = { status: "failed", errorText: "Command exited with code 2" };
		const { jobs } = fakeJobs(job, Promise.resolve());
		const out = await bridgeWith(jobs).callTool(req(new AbortController().signal));
		expect(out).toEqual({ content: [{ type: "text", text: "Command exited with code 2" }], isError: true });
	});

	test("a cancel of the remote call cancels the job", async () => {
		const job = { status: "running" };
		let settle = () => {};
		const { jobs, calls } = fakeJobs(job, new Promise<void>(r => (settle = r)));
		const ctl = new AbortController();
		const pending = bridgeWith(jobs).callTool(req(ctl.signal));
		await waitFor("the takeover under way (delivery acknowledged)", () => calls.includes("ack:bg_1"), {
			timeoutMs: 5000,
		});
		ctl.abort();
		expect(calls).toContain("cancel:bg_1");
		Object.assign(job, { status: "cancelled" });
		settle();
		expect((await pending).isError).toBe(true);
	});
});
