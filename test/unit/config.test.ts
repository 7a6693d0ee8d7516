import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type BridgeConfig,
	defaultConfigPath,
	generateToken,
	isLoopbackHost,
	loadConfig,
	normalizeOrigin,
	rotateToken,
	validateConfig,
} from "../../src/config.ts";

const FILE = "/cfg/a2a-bridge.json";
const TOKEN_32 = "abcdefghijklmnopqrstuvwxyz012345"; // 32 chars: the minimum
const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/;
const mode = (p: string): number => statSync(p).mode & 0o777;

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "a2a-config-"));
});
afterEach(() => {
	rmSync(dir, { recursive: true, force: true });
});

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
		["unknown field", { extra: { nested: true } }],
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
			value: { port: 0, token: undefined, host: "127.0.0.1", host_llm: "allow", allowed_origins: [] },
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
			expect(r.message).toContain(FILE);
			expect(r.message).toContain(field);
		});
	}

	for (const raw of [null, [], "text", 42]) {
		test(`${JSON.stringify(raw)} instead of an object -> refused naming the file`, () => {
			const r = validateConfig(raw, FILE);
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.message).toContain(FILE);
		});
	}
});

describe("loadConfig", () => {
	test("absent file -> created at 0600, tab-indented, default fields and a 43-char base64url token", () => {
		const p = join(dir, "sub", "a2a-bridge.json");
		const loaded = loadConfig(p);
		expect(existsSync(p)).toBe(true);
		expect(mode(p)).toBe(0o600);
		const text = readFileSync(p, "utf8");
		expect(text).toContain('\n\t"port": 0');
		const raw = JSON.parse(text);
		expect(Object.keys(raw)).toEqual(["port", "token", "host", "host_llm"]);
		expect(raw).toMatchObject({ port: 0, host: "127.0.0.1", host_llm: "allow" });
		expect(raw.token).toMatch(BASE64URL_43);
		expect(loaded.config).toEqual({
			port: 0,
			token: raw.token,
			host: "127.0.0.1",
			host_llm: "allow",
			allowed_origins: [],
		});
		expect(loaded.path).toBe(p);
	});

	test("absent token -> generated and written back at 0600, unknown fields kept", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 4242, host: "127.0.0.1", custom: { keep: [1, 2] } }), { mode: 0o644 });
		chmodSync(p, 0o644);
		const loaded = loadConfig(p);
		expect(loaded.config.token).toMatch(BASE64URL_43);
		expect(loaded.config.port).toBe(4242);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw.token).toBe(loaded.config.token);
		expect(raw.custom).toEqual({ keep: [1, 2] });
		expect(raw.port).toBe(4242);
		expect(mode(p)).toBe(0o600);
		expect(readFileSync(p, "utf8")).toContain('\n\t"token": ');
		expect(loaded.warnings.some(w => w.includes(p))).toBe(true);
	});

	for (const token of [12345, null, true, { t: 1 }]) {
		test(`non-string token ${JSON.stringify(token)} -> generated and written back`, () => {
			const p = join(dir, "a2a-bridge.json");
			writeFileSync(p, JSON.stringify({ port: 0, token, other: "kept" }));
			const loaded = loadConfig(p);
			expect(loaded.config.token).toMatch(BASE64URL_43);
			const raw = JSON.parse(readFileSync(p, "utf8"));
			expect(raw.token).toBe(loaded.config.token);
			expect(raw.other).toBe("kept");
		});
	}

	test("existing valid token -> used as is, file untouched", () => {
		const p = join(dir, "a2a-bridge.json");
		const text = JSON.stringify({ port: 1, token: TOKEN_32 });
		writeFileSync(p, text, { mode: 0o600 });
		expect(loadConfig(p).config.token).toBe(TOKEN_32);
		expect(readFileSync(p, "utf8")).toBe(text);
	});

	const refusedTokens: Array<[string, string]> = [
		["short token (31 chars)", TOKEN_32.slice(1)],
		["whitespace in token", `${TOKEN_32.slice(0, 16)} ${TOKEN_32.slice(16)}`],
		["empty token", ""],
	];
	for (const [name, token] of refusedTokens) {
		test(`${name} -> refused naming file and field, file bytes unchanged`, () => {
			const p = join(dir, "a2a-bridge.json");
			writeFileSync(p, JSON.stringify({ port: 0, token }, null, 2), { mode: 0o600 });
			const before = readFileSync(p);
			expect(() => loadConfig(p)).toThrow(p);
			expect(() => loadConfig(p)).toThrow("field 'token'");
			expect(readFileSync(p).equals(before)).toBe(true);
		});
	}

	test("invalid JSON -> refused naming the file, file untouched", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, '{"port": 0,');
		expect(() => loadConfig(p)).toThrow(p);
		expect(readFileSync(p, "utf8")).toBe('{"port": 0,');
	});

	test("malformed port -> refused with the exact field rule", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 70000, token: TOKEN_32 }));
		expect(() => loadConfig(p)).toThrow(`${p}: field 'port' must be an integer in [0, 65535]`);
	});

	test("non-loopback host -> a warning naming the address", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ token: TOKEN_32, host: "0.0.0.0" }));
		const loaded = loadConfig(p);
		expect(loaded.warnings.some(w => w.includes("0.0.0.0"))).toBe(true);
	});

	test("loopback host with a token -> no warnings", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ token: TOKEN_32, host: "127.0.0.1" }));
		expect(loadConfig(p).warnings).toEqual([]);
	});
});

describe("rotateToken", () => {
	const current: BridgeConfig = {
		port: 7000,
		token: TOKEN_32,
		host: "127.0.0.1",
		host_llm: "deny",
		allowed_origins: [],
	};

	test("existing file -> new token written at 0600, every other field kept", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 7000, token: TOKEN_32, host_llm: "deny", mine: "x" }), { mode: 0o600 });
		const token = rotateToken(p, current);
		expect(token).not.toBe(TOKEN_32);
		expect(token).toMatch(BASE64URL_43);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw).toEqual({ port: 7000, token, host_llm: "deny", mine: "x" });
		expect(mode(p)).toBe(0o600);
	});

	test("missing file -> recreated from the current config with the new token", () => {
		const p = join(dir, "gone.json");
		const token = rotateToken(p, current);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw).toEqual({ port: 7000, token, host: "127.0.0.1", host_llm: "deny" });
		expect(mode(p)).toBe(0o600);
	});

	test("file that no longer parses -> refused, file untouched", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, "{broken");
		expect(() => rotateToken(p, current)).toThrow();
		expect(readFileSync(p, "utf8")).toBe("{broken");
	});
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

describe("isLoopbackHost", () => {
	const cases: Array<[string, boolean]> = [
		["127.0.0.1", true],
		["127.1.2.3", true],
		["localhost", true],
		["LOCALHOST", true],
		["::1", true],
		["[::1]", true],
		["0.0.0.0", false],
		["::", false],
		["192.168.1.10", false],
		["example.com", false],
		["127.0.0.1.evil.com", false],
		["localhost.evil.com", false],
	];
	for (const [host, want] of cases) {
		test(`${host} -> ${want}`, () => {
			expect(isLoopbackHost(host)).toBe(want);
		});
	}
});

describe("normalizeOrigin", () => {
	const cases: Array<[string, string | null]> = [
		["http://localhost:3000", "http://localhost:3000"],
		["HTTP://LocalHost:3000", "http://localhost:3000"],
		["https://example.com", "https://example.com"],
		["http://example.com:80", "http://example.com"],
		["http://[::1]:8080", "http://[::1]:8080"],
		["ftp://example.com", null],
		["http://example.com/app", null],
		["http://example.com/", null],
		["http://user:pw@example.com", null],
		["http://example.com?q=1", null],
		["http://example.com#frag", null],
		["not a url", null],
		["null", null],
		["", null],
	];
	for (const [value, want] of cases) {
		test(`${JSON.stringify(value)} -> ${JSON.stringify(want)}`, () => {
			expect(normalizeOrigin(value)).toBe(want);
		});
	}
});
