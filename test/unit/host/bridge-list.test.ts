import { describe, expect, test } from "bun:test";
import { type HostAccess, HostBridge } from "../../../src/host/bridge.ts";
import type { HostTool } from "../../../src/host/shapes.ts";

function tool(name: string, counter: { reads: number }): HostTool {
	const parameters = { type: "object" };
	return {
		name,
		parameters,
		get description() {
			counter.reads++;
			return `${name} tool`;
		},
		execute: async () => ({ content: [] }),
	};
}

function host(tools: HostTool[]): HostAccess {
	return {
		mainSession: () => ({
			getAllToolNames: () => tools.map(t => t.name),
			getToolByName: n => tools.find(t => t.name === n),
		}),
		fallbackTools: () => [],
		wireSchema: () => ({ type: "object" }),
		log: () => {},
	};
}

describe("tools/list cache", () => {
	test("the same registry twice in a row -> descriptions read once", () => {
		const c = { reads: 0 };
		const bridge = new HostBridge(host([tool("a", c), tool("b", c)]));
		const first = bridge.listTools();
		const second = bridge.listTools();
		expect(second).toBe(first);
		expect(c.reads).toBe(2);
	});

	test("a tool added or removed -> seen at once", () => {
		const c = { reads: 0 };
		const tools = [tool("a", c)];
		const bridge = new HostBridge(host(tools));
		expect(bridge.listTools().map(t => t.name)).toEqual(["a"]);
		tools.push(tool("b", c));
		expect(bridge.listTools().map(t => t.name)).toEqual(["a", "b"]);
		tools.shift();
		expect(bridge.listTools().map(t => t.name)).toEqual(["b"]);
	});

	test("a tool replaced under the same name -> described again", () => {
		const c = { reads: 0 };
		const tools = [tool("a", c)];
		const bridge = new HostBridge(host(tools));
		bridge.listTools();
		tools[0] = tool("a", c);
		bridge.listTools();
		expect(c.reads).toBe(2);
	});
});
