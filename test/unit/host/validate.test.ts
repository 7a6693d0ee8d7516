import { describe, expect, test } from "bun:test";
import type { HostAccess, HostTool } from "../../../src/host/shapes.ts";
import { checkArgs, invalidArgsText, MAX_ARG_DEPTH, tooDeep } from "../../../src/host/validate.ts";

const HOST_MESSAGE = `Validation failed for tool "bash":
  - timeout: timeout must be timeout in seconds (was a string)
  - command: command must be a string (was missing)

Received arguments:
{ "timeout": "abc" }`;

const tool = (extra: Partial<HostTool> = {}): HostTool => ({
	name: "bash",
	execute: async () => ({ content: [] }),
	...extra,
});

function host(validate?: HostAccess["validateArgs"]): HostAccess {
	return {
		mainSession: () => null,
		fallbackTools: () => [],
		wireSchema: () => ({}),
		log: () => {},
		...(validate ? { validateArgs: validate } : {}),
	};
}

describe("invalidArgsText", () => {
	test("the host's message -> one line naming each argument, without the echo of the arguments", () => {
		expect(invalidArgsText("bash", HOST_MESSAGE)).toBe(
			"invalid arguments for tool 'bash': timeout: timeout must be timeout in seconds (was a string); command: command must be a string (was missing)",
		);
	});

	test("a one-line message -> kept; a huge one -> cut to 1000 characters and an ellipsis", () => {
		expect(invalidArgsText("read", 'Validation failed for tool "read": not valid JSON')).toBe(
			"invalid arguments for tool 'read': not valid JSON",
		);
		const huge = invalidArgsText("read", `Validation failed for tool "read":\n  - path: ${"x".repeat(5000)}`);
		expect(huge.length).toBe(1001);
		expect(huge.endsWith("…")).toBe(true);
	});
});

describe("checkArgs", () => {
	test("no validator -> the arguments as sent", () => {
		expect(checkArgs(host(), tool(), "bash", { command: 1 })).toEqual({ ok: true, args: { command: 1 } });
	});

	test("the validator coerces -> the coerced arguments run", () => {
		const h = host(() => ({ ok: true, args: { command: "123" } }));
		expect(checkArgs(h, tool(), "bash", { command: 123 })).toEqual({ ok: true, args: { command: "123" } });
	});

	test("the validator refuses -> a refusal naming the argument; a lenient tool runs as sent", () => {
		const h = host(() => ({ ok: false, why: HOST_MESSAGE }));
		const r = checkArgs(h, tool(), "bash", { timeout: "abc" });
		expect(r.ok).toBe(false);
		expect(r.ok ? "" : r.why).toContain("timeout: timeout must be");
		expect(checkArgs(h, tool({ lenientArgValidation: true }), "bash", { timeout: "abc" })).toEqual({
			ok: true,
			args: { timeout: "abc" },
		});
	});
});

describe("deep nesting (issue 20 item 9)", () => {
	const nest = (levels: number): unknown => {
		let v: unknown = 1;
		for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
		return v;
	};
	test("an argument nested deeper than the limit -> named, found without recursion even at 200,000 levels", () => {
		expect(tooDeep({ ok: nest(MAX_ARG_DEPTH), bad: nest(MAX_ARG_DEPTH + 1) })).toBe("bad");
		expect(tooDeep({ a: 1, b: "x", c: nest(MAX_ARG_DEPTH) })).toBeNull();
		expect(tooDeep({ huge: nest(200_000) })).toBe("huge");
	});
	test("checkArgs refuses it before the host's validator runs, naming the argument", () => {
		let validated = false;
		const r = checkArgs(
			host(() => {
				validated = true;
				return { ok: true, args: {} };
			}),
			tool({ lenientArgValidation: true }),
			"bash",
			{ command: nest(10_000) as never },
		);
		expect(r).toEqual({
			ok: false,
			why: `invalid arguments for tool 'bash': 'command' is nested deeper than ${MAX_ARG_DEPTH} levels`,
		});
		expect(validated).toBe(false);
	});
});
