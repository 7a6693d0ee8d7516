import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { defaultConfigPath, generateToken, validateConfig } from "../../../src/config/config.ts";

const FILE = "/cfg/a2a-bridge.json";
const TOKEN_32 = "abcdefghijklmnopqrstuvwxyz012345"; // 32 chars: the minimum
const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/;

describe("validateConfig", () => {
	const good: Array<[string, Record<string, unknown>]> = [
		["empty object (all defaults, token absent)", {}],
		["port 0", { port: 0 }],
		["port 65535", { port: 65535 }],
		["port 8080", { port: 8080 }],
		["token of exactly 32 chars", { token: TOKEN_32 }],
		["token of 43 base64url chars", { token: generateToken() }],
		["host localhost", { host: "localhost" }],
		["host 0.0.0.0", { host: "0.0.0.0" }],
		["host_llm allow", { host_llm: "allow" }],
		["host_llm deny", { host_llm: "deny" }],
		["allowed_origins empty", { allowed_origins: [] }],
		["allowed_origins with an origin", { allowed_origins: ["http://localhost:3000", "https://example.com"] }],
		["$schema", { $schema: "file:///x/schema.json" }],
		["name lab-a", { name: "lab-a" }],
	];
	for (const [name, raw] of good) {
		test(`${name} -> ok`, () => {
			expect(validateConfig(raw, FILE).ok).toBe(true);
		});
	}

	test("absent fields -> defaults port 0, host 127.0.0.1, host_llm allow, no origins, token undefined", () => {
		const r = validateConfig({}, FILE);
		expect(r).toEqual({
			ok: true,
			value: {
				port: 0,
				token: undefined,
				host: "127.0.0.1",
				host_llm: "allow",
				allowed_origins: [],
				tokens: [],
				blob: "write",
			},
		});
	});

	test("non-string token -> treated as absent (caller generates one)", () => {
		const r = validateConfig({ token: 12345 }, FILE);
		expect(r.ok && r.value.token).toBe(undefined);
	});

	test("allowed_origins are normalized", () => {
		const r = validateConfig({ allowed_origins: ["HTTP://LocalHost:3000"] }, FILE);
		expect(r.ok && r.value.allowed_origins).toEqual(["http://localhost:3000"]);
	});

	const bad: Array<[string, Record<string, unknown>, string]> = [
		["port -1", { port: -1 }, "field 'port' must be an integer in [0, 65535]"],
		["port 65536", { port: 65536 }, "field 'port' must be an integer in [0, 65535]"],
		["port 1.5", { port: 1.5 }, "field 'port' must be an integer in [0, 65535]"],
		["port as string", { port: "8080" }, "field 'port' must be an integer in [0, 65535]"],
		[
			"name with a space",
			{ name: "lab a" },
			"field 'name' must be 1-48 of A-Z a-z 0-9 _ - starting with a letter or digit",
		],
		["name empty", { name: "" }, "field 'name' must be 1-48"],
		["name of 49", { name: "a".repeat(49) }, "field 'name' must be 1-48"],
		["name not a string", { name: 7 }, "field 'name' must be 1-48"],
		["port null", { port: null }, "field 'port' must be an integer in [0, 65535]"],
		["token of 31 chars", { token: TOKEN_32.slice(1) }, "field 'token'"],
		["empty token", { token: "" }, "field 'token'"],
		["token with a space", { token: `${TOKEN_32} x` }, "field 'token'"],
		["token with a tab", { token: `${TOKEN_32}\tx` }, "field 'token'"],
		["token of 40 spaces", { token: " ".repeat(40) }, "field 'token'"],
		["empty host", { host: "" }, "field 'host'"],
		["whitespace host", { host: "   " }, "field 'host'"],
		["numeric host", { host: 127 }, "field 'host'"],
		["host null", { host: null }, "field 'host'"],
		["host_llm yes", { host_llm: "yes" }, "field 'host_llm'"],
		["host_llm true", { host_llm: true }, "field 'host_llm'"],
		["host_llm null", { host_llm: null }, "field 'host_llm'"],
		["an unknown field", { extra: { nested: true } }, "unknown field 'extra'"],
		["allowed_origins as string", { allowed_origins: "http://localhost:3000" }, "field 'allowed_origins'"],
		["allowed_origins null", { allowed_origins: null }, "field 'allowed_origins'"],
		["allowed_origins with a non-url", { allowed_origins: ["not a url"] }, "field 'allowed_origins[0]'"],
		["allowed_origins with a path", { allowed_origins: ["http://localhost:3000/app"] }, "field 'allowed_origins[0]'"],
		["allowed_origins with a number", { allowed_origins: ["http://a.b", 3] }, "field 'allowed_origins[1]'"],
	];
	for (const [name, raw, field] of bad) {
		test(`${name} -> refused naming the file and ${field.split(" ")[1]}`, () => {
			const r = validateConfig(raw, FILE);
			expect(r.ok).toBe(false);
			if (r.ok) return;
			expect(r.why).toContain(FILE);
			expect(r.why).toContain(field);
		});
	}

	for (const raw of [null, [], "text", 42]) {
		test(`${JSON.stringify(raw)} instead of an object -> refused naming the file`, () => {
			const r = validateConfig(raw, FILE);
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.why).toContain(FILE);
		});
	}
});

describe("generateToken", () => {
	test("-> 43 base64url chars, different each time", () => {
		const a = generateToken();
		const b = generateToken();
		expect(a).toMatch(BASE64URL_43);
		expect(a.length).toBe(43);
		expect(a).not.toBe(b);
	});
});

describe("defaultConfigPath", () => {
	test("A2A_BRIDGE_CONFIG set -> that path", () => {
		expect(defaultConfigPath({ A2A_BRIDGE_CONFIG: "/x/y.json" })).toBe("/x/y.json");
	});
	test("unset or empty -> ~/.omp/agent/a2a-bridge.json", () => {
		expect(defaultConfigPath({})).toEndWith(join(".omp", "agent", "a2a-bridge.json"));
		expect(defaultConfigPath({ A2A_BRIDGE_CONFIG: "" })).toEndWith(join(".omp", "agent", "a2a-bridge.json"));
	});
});
