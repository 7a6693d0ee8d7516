import { describe, expect, test } from "bun:test";
import { boxTag } from "../../../src/host/box-tag.ts";
import {
	announcement,
	type BridgeStatus,
	entryName,
	MCP_JSON_TIMEOUT_MS,
	mcpJson,
	NOT_RUNNING,
	statusText,
	tokenPrefix,
} from "../../../src/host/commands.ts";

const TOKEN = "abcdef0123456789abcdef0123456789abcdef01234"; // 43 chars
const URL = "http://127.0.0.1:1234/";

const status = (over: Partial<BridgeStatus> = {}): BridgeStatus => ({
	url: URL,
	ownerSecret: TOKEN,
	sessions: 3,
	callsServed: 17,
	inFlight: [],
	takeover: "allow",
	auditPath: "/home/u/.omp/agent/a2a-bridge.log",
	...over,
});

describe("announcement", () => {
	test("-> 'A2A bridge listening on <url> (token <first 6>…)'", () => {
		expect(announcement(URL, TOKEN)).toBe("A2A bridge listening on http://127.0.0.1:1234/ (token abcdef…)");
	});
	test("-> never the full token", () => {
		expect(announcement(URL, TOKEN)).not.toContain(TOKEN.slice(0, 7));
	});
});

describe("tokenPrefix", () => {
	test("-> first 6 chars and an ellipsis", () => {
		expect(tokenPrefix(TOKEN)).toBe("abcdef…");
	});
});

describe("statusText", () => {
	test("idle bridge -> url, token prefix, sessions n/64, calls served, none in flight, takeover, audit path", () => {
		const text = statusText(status());
		expect(text).toContain(URL);
		expect(text).toContain("abcdef…");
		expect(text).toContain("3/64");
		expect(text).toContain("calls served: 17");
		expect(text).toContain("calls in flight: 0");
		expect(text).toContain("host_llm=allow");
		expect(text).toContain("/home/u/.omp/agent/a2a-bridge.log");
	});

	test("calls in flight -> count, each tool with its age in seconds", () => {
		const text = statusText(
			status({
				inFlight: [
					{ tool: "bash", ageMs: 65_000 },
					{ tool: "read", ageMs: 1_400 },
				],
				takeover: "deny",
			}),
		);
		expect(text).toContain("calls in flight: 2");
		expect(text).toContain("bash (65 s)");
		expect(text).toContain("read (1 s)");
		expect(text).toContain("host_llm=deny");
	});

	test("-> never the full token", () => {
		expect(statusText(status())).not.toContain(TOKEN.slice(0, 7));
	});

	test("-> one fact per line", () => {
		expect(statusText(status()).split("\n").length).toBe(7);
	});
});

describe("mcpJson", () => {
	test("-> parses to an mcpServers entry with url, Bearer header and a long timeout", () => {
		const parsed = JSON.parse(mcpJson(URL, TOKEN, "omp-host"));
		expect(parsed).toEqual({
			mcpServers: {
				"omp-host": {
					type: "http",
					url: URL,
					headers: { Authorization: `Bearer ${TOKEN}` },
					timeout: MCP_JSON_TIMEOUT_MS,
				},
			},
		});
	});

	test("timeout -> far beyond the host MCP client's 30 s default", () => {
		const entry = JSON.parse(mcpJson(URL, TOKEN, "omp-host")).mcpServers["omp-host"];
		expect(typeof entry.timeout).toBe("number");
		expect(entry.timeout).toBeGreaterThan(30_000);
		expect(entry.timeout).toBeGreaterThanOrEqual(60 * 60 * 1000);
	});

	test("custom name -> used as the server key", () => {
		expect(Object.keys(JSON.parse(mcpJson(URL, TOKEN, "laptop")).mcpServers)).toEqual(["laptop"]);
	});
});

describe("entryName: one per box, the same at every start (contract §20)", () => {
	test("no box tag -> omp-<host name>-<port>, the host name folded to what every client keeps", () => {
		expect(entryName(undefined, "labbox", 20817)).toBe("omp-labbox-20817");
		expect(entryName(undefined, "Lab.Box_2.example.com", 8765)).toBe("omp-lab-box-2-example-com-8765");
		expect(entryName(undefined, "", 8765)).toBe("omp-host-8765");
		expect(entryName(undefined, "x".repeat(80), 1).length).toBeLessThanOrEqual(48);
	});

	test("a box tag -> omp-<host name>-<tag>-<port>; at most 48 characters, every one a client keeps", () => {
		expect(entryName(undefined, "labbox", 20817, "3fa2c1")).toBe("omp-labbox-3fa2c1-20817");
		for (const host of [
			"x".repeat(80),
			"-".repeat(40),
			"é".repeat(40),
			"a-".repeat(40),
			"日本.example",
			"\n\u0007$(id)",
		]) {
			const name = entryName(undefined, host, 65535, "abcdef");
			expect({ host, name, ok: name.length <= 48 && /^omp-[a-z0-9]+(?:-[a-z0-9]+)*-abcdef-65535$/.test(name) }).toEqual(
				{
					host,
					name,
					ok: true,
				},
			);
		}
		// Only a tag boxTag can make is used: anything else leaves the old name, never caller text in a key.
		for (const bad of ["", "ABCDEF", "abcde", "abcdef0", "../x", "zzzzzz"]) {
			expect(entryName(undefined, "labbox", 1, bad)).toBe("omp-labbox-1");
		}
	});

	test("clones (one host name, one port) with their own machine ids -> distinct; same inputs -> same name", () => {
		const names = [
			entryName(undefined, "labbox", 20817),
			entryName(undefined, "labbox", 20818),
			entryName(undefined, "labbox-b", 20817),
			entryName(undefined, "labbox", 20817, boxTag("0123456789abcdef0123456789abcdef")),
			entryName(undefined, "labbox", 20817, boxTag("fedcba9876543210fedcba9876543210")),
		];
		expect(new Set(names).size).toBe(5);
		expect(entryName(undefined, "labbox", 20817, boxTag("0123456789abcdef0123456789abcdef"))).toBe(names[3] as string);
	});

	test("a configured name -> used as it is, tag or not", () => {
		expect(entryName("lab-a", "labbox", 20817)).toBe("lab-a");
		expect(entryName("lab-a", "labbox", 20817, "3fa2c1")).toBe("lab-a");
	});
});

describe("NOT_RUNNING", () => {
	test("-> 'A2A bridge not running'", () => {
		expect(NOT_RUNNING).toBe("A2A bridge not running");
	});
});
