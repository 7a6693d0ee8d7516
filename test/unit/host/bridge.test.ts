import { describe, expect, test } from "bun:test";
import {
	type HostAccess,
	HostBridge,
	type HostSession,
	MAIN_UNAVAILABLE,
	mapContent,
	notExposed,
	notGated,
} from "../../../src/host/bridge.ts";
import { annotationsFor } from "../../../src/host/catalog.ts";
import { QueueRefusal } from "../../../src/host/prompt-queue.ts";
import { type HostTool, type HostToolResult, TOOL_FAILED } from "../../../src/host/shapes.ts";
import { errorDetail, errorText } from "../../../src/text/error-text.ts";
import { behindGate, callReq, GATE_RUNNER } from "../../helpers/gate.ts";

const OBJECT_SCHEMA = { type: "object", properties: { path: { type: "string" } } };

/** A host tool whose execute records its arguments and returns `result` (or throws it). */
function fakeTool(name: string, extra: Partial<HostTool> = {}, result: HostToolResult | Error = { content: [] }) {
	const execCalls: unknown[][] = [];
	const tool: HostTool = {
		name,
		execute: async (...args: unknown[]) => {
			execCalls.push(args);
			if (result instanceof Error) throw result;
			return result;
		},
		...extra,
	};
	return { tool, execCalls };
}

interface FakeHost {
	host: HostAccess;
	logs: string[];
	events: Array<Record<string, unknown>>;
	schemaCalls: string[];
	setMain(s: HostSession | null): void;
}

function fakeHost(opts: {
	tools?: HostTool[];
	/** Names the registry lists; defaults to the tools' names. */
	names?: string[];
	/** Extra tools reachable by getToolByName but not listed (aliases). */
	aliases?: Record<string, HostTool>;
	fallback?: Array<{ name: string; description?: string; parameters?: unknown }>;
	wireSchema?: HostAccess["wireSchema"];
	emit?: (e: Record<string, unknown>) => void;
}): FakeHost {
	const tools = opts.tools ?? [];
	const logs: string[] = [];
	const events: Array<Record<string, unknown>> = [];
	const schemaCalls: string[] = [];
	let main: HostSession | null = {
		getAllToolNames: () => opts.names ?? tools.map(t => t.name),
		getToolByName: name => {
			const found = tools.find(t => t.name === name) ?? opts.aliases?.[name];
			return found === undefined ? undefined : behindGate(found);
		},
		extensionRunner: GATE_RUNNER,
		agent: {
			emitExternalEvent: e => {
				events.push(e);
				opts.emit?.(e);
			},
		},
	};
	const host: HostAccess = {
		mainSession: () => main,
		fallbackTools: () => opts.fallback ?? [],
		wireSchema: t => {
			schemaCalls.push(t.name);
			return opts.wireSchema ? opts.wireSchema(t) : (t.parameters as Record<string, unknown>);
		},
		log: line => logs.push(line),
	};
	return {
		host,
		logs,
		events,
		schemaCalls,
		setMain: s => {
			main = s;
		},
	};
}

describe("annotationsFor", () => {
	const cases: Array<[string, unknown, Record<string, boolean> | undefined]> = [
		["read", "read", { readOnlyHint: true }],
		["write", "write", { readOnlyHint: false, destructiveHint: true }],
		["exec", "exec", { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
		["{tier: read}", { tier: "read" }, { readOnlyHint: true }],
		["{tier: exec}", { tier: "exec" }, { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
		["function returning write", () => "write", { readOnlyHint: false, destructiveHint: true }],
		["function returning {tier: read}", () => ({ tier: "read" }), { readOnlyHint: true }],
		[
			"function that throws",
			() => {
				throw new Error("needs args");
			},
			undefined,
		],
		["undefined", undefined, undefined],
		["null", null, undefined],
		["unknown tier string", "prompt", undefined],
		["{tier: unknown}", { tier: "mystery" }, undefined],
		["{} without tier", {}, undefined],
	];
	for (const [name, approval, want] of cases) {
		test(`${name} -> ${JSON.stringify(want) ?? "no annotations"}`, () => {
			expect(annotationsFor(approval)).toEqual(want);
		});
	}

	test("function approval -> resolved for empty arguments", () => {
		const seen: unknown[] = [];
		annotationsFor((args: unknown) => {
			seen.push(args);
			return "read";
		});
		expect(seen).toEqual([{}]);
	});
});

describe("mapContent", () => {
	test("text block -> text block", () => {
		expect(mapContent([{ type: "text", text: "hi", extra: 1 }])).toEqual([{ type: "text", text: "hi" }]);
	});
	test("image block -> {type: image, data, mimeType}", () => {
		expect(mapContent([{ type: "image", data: "AAAA", mimeType: "image/png", other: true }])).toEqual([
			{ type: "image", data: "AAAA", mimeType: "image/png" },
		]);
	});
	test("other block -> text block holding its JSON", () => {
		const block = { type: "resource", resource: { uri: "file:///x" } };
		expect(mapContent([block])).toEqual([{ type: "text", text: JSON.stringify(block) }]);
	});
	test("image without mimeType -> text block holding its JSON", () => {
		const block = { type: "image", data: "AAAA" };
		expect(mapContent([block])).toEqual([{ type: "text", text: JSON.stringify(block) }]);
	});
	test("mixed blocks -> order kept", () => {
		const out = mapContent([
			{ type: "text", text: "a" },
			{ type: "image", data: "B", mimeType: "image/jpeg" },
			{ type: "text", text: "c" },
		]);
		expect(out.map(b => b.type)).toEqual(["text", "image", "text"]);
	});
	test("not an array -> []", () => {
		expect(mapContent(undefined)).toEqual([]);
		expect(mapContent("text")).toEqual([]);
	});
	test("circular block -> still a text block", () => {
		const block: Record<string, unknown> = { type: "weird" };
		block.self = block;
		const out = mapContent([block]);
		expect(out.length).toBe(1);
		expect(out[0]?.type).toBe("text");
	});
});

describe("errorText", () => {
	test("Error -> its message (its name when empty); string -> itself; other -> the fallback or String", () => {
		expect(errorText(new Error("denied"))).toBe("denied");
		expect(errorText(new TypeError(""))).toBe("TypeError");
		expect(errorText("plain")).toBe("plain");
		expect(errorText(42, TOOL_FAILED)).toBe("tool failed");
		expect(errorText(42)).toBe("42");
	});
	test("errorDetail -> the stack where there is one, else the same text", () => {
		const e = new Error("boom");
		expect(errorDetail(e)).toBe(e.stack as string);
		expect(errorDetail({ toString: () => "odd" })).toBe("odd");
	});
});

describe("HostBridge.listTools", () => {
	test("tools -> name, description ('' when absent), schema via wireSchema, annotations from approval", () => {
		const { tool: read } = fakeTool("read", {
			description: "Read a file",
			parameters: OBJECT_SCHEMA,
			approval: "read",
		});
		const { tool: bash } = fakeTool("bash", { parameters: { type: "object" }, approval: "exec" });
		const { tool: custom } = fakeTool("custom", { description: "No tier", parameters: { type: "object" } });
		const f = fakeHost({ tools: [read, bash, custom] });
		expect(new HostBridge(f.host).listTools()).toEqual([
			{ name: "read", description: "Read a file", inputSchema: OBJECT_SCHEMA, annotations: { readOnlyHint: true } },
			{
				name: "bash",
				description: "",
				inputSchema: { type: "object" },
				annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
			},
			{ name: "custom", description: "No tier", inputSchema: { type: "object" } },
		]);
	});

	test("tool without a tier -> no annotations key at all", () => {
		const { tool } = fakeTool("x", { parameters: { type: "object" } });
		const [listed] = new HostBridge(fakeHost({ tools: [tool] }).host).listTools();
		expect(listed && "annotations" in listed).toBe(false);
	});

	test("registry order -> kept", () => {
		const tools = ["c", "a", "b"].map(n => fakeTool(n, { parameters: { type: "object" } }).tool);
		expect(new HostBridge(fakeHost({ tools }).host).listTools().map(t => t.name)).toEqual(["c", "a", "b"]);
	});

	test("listed name without a tool -> skipped", () => {
		const { tool } = fakeTool("read", { parameters: { type: "object" } });
		const f = fakeHost({ tools: [tool], names: ["read", "ghost"] });
		expect(new HostBridge(f.host).listTools().map(t => t.name)).toEqual(["read"]);
	});

	test("schema -> converted once per parameters object across lists and tools", () => {
		const shared = { type: "object" };
		const { tool: a } = fakeTool("a", { parameters: shared });
		const { tool: b } = fakeTool("b", { parameters: shared });
		const { tool: c } = fakeTool("c", { parameters: { type: "object" } });
		const f = fakeHost({ tools: [a, b, c] });
		const bridge = new HostBridge(f.host);
		bridge.listTools();
		bridge.listTools();
		bridge.listTools();
		expect(f.schemaCalls).toEqual(["a", "c"]);
	});

	test("new parameters object -> converted again", () => {
		const { tool } = fakeTool("a", { parameters: { type: "object" } });
		const f = fakeHost({ tools: [tool] });
		const bridge = new HostBridge(f.host);
		bridge.listTools();
		tool.parameters = { type: "object", properties: {} };
		bridge.listTools();
		expect(f.schemaCalls).toEqual(["a", "a"]);
	});

	test("throwing wireSchema -> {type: object} for that tool, a log line, the rest listed", () => {
		const { tool: bad } = fakeTool("bad", { parameters: { kind: "weird" } });
		const { tool: good } = fakeTool("good", { parameters: OBJECT_SCHEMA });
		const f = fakeHost({
			tools: [bad, good],
			wireSchema: t => {
				if (t.name === "bad") throw new Error("unsupported zod type");
				return t.parameters as Record<string, unknown>;
			},
		});
		const tools = new HostBridge(f.host).listTools();
		expect(tools.map(t => [t.name, t.inputSchema])).toEqual([
			["bad", { type: "object" }],
			["good", OBJECT_SCHEMA],
		]);
		expect(f.logs.length).toBe(1);
		expect(f.logs[0]).toContain("bad");
		expect(f.logs[0]).toContain("unsupported zod type");
	});

	test("wireSchema returning a non-object schema -> {type: object}", () => {
		const { tool } = fakeTool("s", { parameters: { type: "string" } });
		const f = fakeHost({ tools: [tool] });
		expect(new HostBridge(f.host).listTools()[0]?.inputSchema).toEqual({ type: "object" });
	});

	test("no live Main -> the fallback tools, without annotations", () => {
		const f = fakeHost({ fallback: [{ name: "read", parameters: { type: "object" } }, { name: "write" }] });
		f.setMain(null);
		expect(new HostBridge(f.host).listTools()).toEqual([
			{ name: "read", description: "", inputSchema: { type: "object" } },
			{ name: "write", description: "", inputSchema: { type: "object" } },
		]);
	});
});

describe("HostBridge.callTool", () => {
	test("listed tool -> execute(callId, args, signal, _, undefined), content mapped", async () => {
		const { tool, execCalls } = fakeTool(
			"read",
			{},
			{
				content: [
					{ type: "text", text: "file body" },
					{ type: "custom", n: 1 },
				],
			},
		);
		const f = fakeHost({ tools: [tool] });
		const req = callReq("read", { path: "/etc/hosts" });
		const out = await new HostBridge(f.host).callTool(req);
		expect(out).toEqual({
			content: [
				{ type: "text", text: "file body" },
				{ type: "text", text: '{"type":"custom","n":1}' },
			],
			isError: false,
		});
		expect(execCalls.length).toBe(1);
		const args = execCalls[0] as unknown[];
		expect(args[0]).toBe("call-1");
		expect(args[1]).toEqual({ path: "/etc/hosts" });
		expect(args[2]).toBe(req.signal);
		expect(args.length).toBe(5);
		expect(args[4]).toBeUndefined();
	});

	test("tool result with isError true -> isError true", async () => {
		const { tool } = fakeTool("write", {}, { content: [{ type: "text", text: "nope" }], isError: true });
		const out = await new HostBridge(fakeHost({ tools: [tool] }).host).callTool(callReq("write"));
		expect(out).toEqual({ content: [{ type: "text", text: "nope" }], isError: true });
	});

	test("unknown name -> isError with \"tool 'x' is not exposed by this bridge\"", async () => {
		const f = fakeHost({ tools: [fakeTool("read").tool] });
		const out = await new HostBridge(f.host).callTool(callReq("x"));
		expect(out).toEqual({
			content: [{ type: "text", text: "tool 'x' is not exposed by this bridge" }],
			isError: true,
			refused: true,
		});
		expect(notExposed("x")).toBe("tool 'x' is not exposed by this bridge");
	});

	test("alias reachable by getToolByName but not listed -> not exposed, never executed", async () => {
		const alias = fakeTool("bash");
		const f = fakeHost({ tools: [fakeTool("read").tool], aliases: { "xd://bash": alias.tool } });
		const out = await new HostBridge(f.host).callTool(callReq("xd://bash"));
		expect(out).toEqual({
			content: [{ type: "text", text: "tool 'xd://bash' is not exposed by this bridge" }],
			refused: true,
			isError: true,
		});
		expect(alias.execCalls).toEqual([]);
		expect(f.events).toEqual([]);
	});

	test("a tool not behind omp's approval gate (fact approval-gate) -> refused by name, never executed", async () => {
		const bare = fakeTool("bash");
		const other = fakeTool("read");
		const f = fakeHost({ tools: [bare.tool, other.tool] });
		const runner = { getUIContext: () => undefined };
		const gates: Record<string, object> = {
			bash: bare.tool, // the tool as it is: its own execute, no wrapper that asks
			read: { ...behindGate(other.tool), runner }, // a wrapper, but around another runner than Main's
		};
		f.setMain({
			getAllToolNames: () => ["bash", "read"],
			getToolByName: name => gates[name] as HostTool,
			extensionRunner: GATE_RUNNER,
		});
		for (const name of ["bash", "read"]) {
			const out = await new HostBridge(f.host).callTool(callReq(name));
			expect(out).toEqual({ content: [{ type: "text", text: notGated(name) }], refused: true, isError: true });
		}
		expect(notGated("bash")).toContain("host fact 'approval-gate'");
		expect([bare.execCalls, other.execCalls]).toEqual([[], []]);
		expect(f.events).toEqual([]);
	});

	test("no live Main -> isError with 'main session not available'", async () => {
		const f = fakeHost({ tools: [fakeTool("read").tool] });
		f.setMain(null);
		const out = await new HostBridge(f.host).callTool(callReq("read"));
		expect(out).toEqual({
			content: [{ type: "text", text: "main session not available" }],
			isError: true,
			refused: true,
		});
		expect(MAIN_UNAVAILABLE).toBe("main session not available");
	});

	test("throwing tool (e.g. approval denied) -> isError with its message", async () => {
		const { tool } = fakeTool("write", {}, new Error("Tool call denied by user: write"));
		const out = await new HostBridge(fakeHost({ tools: [tool] }).host).callTool(callReq("write"));
		expect(out).toEqual({ content: [{ type: "text", text: "Tool call denied by user: write" }], isError: true });
	});

	test("the prompt queue's refusal (issue 38 item 7) -> a refusal with its clear message, never a denial", async () => {
		const { tool } = fakeTool("write", {}, new QueueRefusal("approval queue full: token 'ci' already has 3"));
		const out = await new HostBridge(fakeHost({ tools: [tool] }).host).callTool(callReq("write"));
		expect(out).toEqual({
			content: [{ type: "text", text: "approval queue full: token 'ci' already has 3" }],
			isError: true,
			refused: true,
		});
	});

	test("call -> tool_execution_start then _end events with the call id", async () => {
		const { tool } = fakeTool("read", {}, { content: [{ type: "text", text: "ok" }] });
		const f = fakeHost({ tools: [tool] });
		await new HostBridge(f.host).callTool(callReq("read", { path: "/a" }));
		// UI events run after the current I/O turn, off the call's path.
		await new Promise(r => setImmediate(r));
		expect(f.events.map(e => [e.type, e.toolCallId, e.toolName])).toEqual([
			["tool_execution_start", "call-1", "read"],
			["tool_execution_end", "call-1", "read"],
		]);
		expect(f.events[0]?.args).toEqual({ path: "/a" });
		expect(f.events[1]?.isError).toBe(false);
	});

	test("throwing emitExternalEvent -> same result, a log line", async () => {
		const result = { content: [{ type: "text", text: "ok" }] };
		const { tool } = fakeTool("read", {}, result);
		const f = fakeHost({
			tools: [tool],
			emit: () => {
				throw new Error("tui gone");
			},
		});
		const out = await new HostBridge(f.host).callTool(callReq("read"));
		expect(out).toEqual({ content: [{ type: "text", text: "ok" }], isError: false });
		await new Promise(r => setImmediate(r));
		expect(f.logs.length).toBe(2);
		expect(f.logs[0]).toContain("tui gone");
	});

	test("Main without an agent -> call still runs", async () => {
		const { tool, execCalls } = fakeTool("read", {}, { content: [] });
		const f = fakeHost({ tools: [tool] });
		f.setMain({ getAllToolNames: () => ["read"], getToolByName: () => behindGate(tool), extensionRunner: GATE_RUNNER });
		const out = await new HostBridge(f.host).callTool(callReq("read"));
		expect(out).toEqual({ content: [], isError: false });
		expect(execCalls.length).toBe(1);
	});

	test("registry read at each call -> a tool removed from Main is no longer exposed", async () => {
		const names = ["read"];
		const { tool } = fakeTool("read");
		const f = fakeHost({ tools: [tool] });
		f.setMain({ getAllToolNames: () => names, getToolByName: () => behindGate(tool), extensionRunner: GATE_RUNNER });
		const bridge = new HostBridge(f.host);
		expect((await bridge.callTool(callReq("read"))).isError).toBe(false);
		names.pop();
		expect((await bridge.callTool(callReq("read"))).isError).toBe(true);
	});
});
