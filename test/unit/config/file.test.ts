import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	chmodSync,
	existsSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BridgeConfig } from "../../../src/config/config.ts";
import { addToken, loadConfig, pinPort, rotateToken, SCHEMA_URL } from "../../../src/config/file.ts";

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

describe("loadConfig", () => {
	test("absent file -> created at 0600, tab-indented, default fields and a 43-char base64url token", () => {
		const p = join(dir, "sub", "a2a-bridge.json");
		const loaded = loadConfig(p);
		expect(existsSync(p)).toBe(true);
		expect(mode(p)).toBe(0o600);
		const text = readFileSync(p, "utf8");
		expect(text).toContain('\n\t"token": ');
		const raw = JSON.parse(text);
		// No port yet: the first start writes the one it bound (pinPort). `$schema` names the shipped schema.
		expect(Object.keys(raw)).toEqual(["$schema", "token", "host", "host_llm"]);
		expect(raw).toMatchObject({ $schema: SCHEMA_URL, host: "127.0.0.1", host_llm: "allow" });
		expect(existsSync(new URL(raw.$schema))).toBe(true);
		expect(loaded.portFromFile).toBe(false);
		expect(raw.token).toMatch(BASE64URL_43);
		expect(loaded.config).toEqual({
			port: 0,
			token: raw.token,
			host: "127.0.0.1",
			host_llm: "allow",
			allowed_origins: [],
			tokens: [],
			blob: "write",
		});
		expect(loaded.path).toBe(p);
	});

	test("absent token -> generated and written back at 0600, other fields kept", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 4242, host: "127.0.0.1", allowed_origins: ["http://a.b"] }), {
			mode: 0o644,
		});
		chmodSync(p, 0o644);
		const loaded = loadConfig(p);
		expect(loaded.config.token).toMatch(BASE64URL_43);
		expect(loaded.config.port).toBe(4242);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw.token).toBe(loaded.config.token);
		expect(raw.allowed_origins).toEqual(["http://a.b"]);
		expect(raw.port).toBe(4242);
		expect(mode(p)).toBe(0o600);
		expect(readFileSync(p, "utf8")).toContain('\n\t"token": ');
		expect(loaded.warnings.some(w => w.includes(p))).toBe(true);
	});

	for (const token of [12345, null, true, { t: 1 }]) {
		test(`non-string token ${JSON.stringify(token)} -> generated and written back`, () => {
			const p = join(dir, "a2a-bridge.json");
			writeFileSync(p, JSON.stringify({ port: 0, token, blob: "read" }));
			const loaded = loadConfig(p);
			expect(loaded.config.token).toMatch(BASE64URL_43);
			const raw = JSON.parse(readFileSync(p, "utf8"));
			expect(raw.token).toBe(loaded.config.token);
			expect(raw.blob).toBe("read");
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
		tokens: [],
		blob: "write",
	};

	test("existing file -> new token written at 0600, every other field kept", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 7000, token: TOKEN_32, host_llm: "deny", blob: "off" }), { mode: 0o600 });
		const token = rotateToken(p, current);
		expect(token).not.toBe(TOKEN_32);
		expect(token).toMatch(BASE64URL_43);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw).toEqual({ port: 7000, token, host_llm: "deny", blob: "off" });
		expect(mode(p)).toBe(0o600);
	});

	test("missing file -> recreated from the current config with the new token", () => {
		const p = join(dir, "gone.json");
		const token = rotateToken(p, current);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw).toEqual({ port: 7000, token, host: "127.0.0.1", host_llm: "deny" });
		expect(mode(p)).toBe(0o600);
	});

	test("missing file -> optional fields recreated only where they differ from their default", () => {
		const p = join(dir, "gone.json");
		const live = { ...current, allowed_origins: ["http://a:1"], blob: "read" as const };
		const token = rotateToken(p, live);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(raw).toEqual({
			port: 7000,
			token,
			host: "127.0.0.1",
			host_llm: "deny",
			allowed_origins: ["http://a:1"],
			blob: "read",
		});
	});

	test("file that no longer parses -> refused, file untouched", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, "{broken");
		expect(() => rotateToken(p, current)).toThrow();
		expect(readFileSync(p, "utf8")).toBe("{broken");
	});
});

describe("pinPort: the first start's port is written back (contract §18)", () => {
	test("absent port -> written right after $schema, other fields and order kept; loadConfig then says it came from the file", () => {
		const p = join(dir, "a2a-bridge.json");
		loadConfig(p);
		expect(pinPort(p, 43210)).toBe(true);
		const raw = JSON.parse(readFileSync(p, "utf8"));
		expect(Object.keys(raw)).toEqual(["$schema", "port", "token", "host", "host_llm"]);
		expect(raw.port).toBe(43210);
		expect(mode(p)).toBe(0o600);
		const again = loadConfig(p);
		expect(again).toMatchObject({ portFromFile: true, config: { port: 43210 } });
	});

	test("port 0 written by a user -> kept (random every start), never replaced", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ port: 0, token: TOKEN_32 }), { mode: 0o600 });
		const loaded = loadConfig(p);
		expect(loaded).toMatchObject({ portFromFile: true, config: { port: 0 } });
		const before = readFileSync(p, "utf8");
		expect(pinPort(p, 43210)).toBe(false);
		expect(readFileSync(p, "utf8")).toBe(before);
	});

	test("a config that stopped validating meanwhile -> refused, file unchanged", () => {
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(p, JSON.stringify({ token: TOKEN_32, blobs: "read" }), { mode: 0o600 });
		const before = readFileSync(p, "utf8");
		expect(() => pinPort(p, 43210)).toThrow("unknown field 'blobs' (did you mean 'blob'?)");
		expect(readFileSync(p, "utf8")).toBe(before);
	});
});

describe("writes are safe", () => {
	test("a link handed to a write is never replaced (callers hand in the file it reaches; the link and its target stay)", () => {
		const target = join(dir, "real.json");
		const p = join(dir, "a2a-bridge.json");
		writeFileSync(target, JSON.stringify({ token: TOKEN_32 }), { mode: 0o600 });
		symlinkSync(target, p);
		expect(loadConfig(p).config.token).toBe(TOKEN_32);
		expect(() => pinPort(p, 4000)).toThrow(`${p} became a symlink after its name was resolved; not rewritten`);
		expect(() => addToken(p, loadConfig(p).config, "ci")).toThrow("became a symlink");
		expect(readFileSync(target, "utf8")).toBe(JSON.stringify({ token: TOKEN_32 }));
	});

	test("every write validates the whole result first: a bad object rebuilt into a missing file is not written", () => {
		const p = join(dir, "gone.json");
		const bad = { ...loadConfig(join(dir, "seed.json")).config, host: " " };
		expect(() => rotateToken(p, bad)).toThrow(`${p}: field 'host' must be a non-empty string; file left unchanged`);
		expect(existsSync(p)).toBe(false);
	});

	test("no temp or lock file is left behind after writes", () => {
		const p = join(dir, "a2a-bridge.json");
		const cfg = loadConfig(p).config;
		pinPort(p, 4000);
		addToken(p, cfg, "ci");
		expect(readdirSync(dir)).toEqual(["a2a-bridge.json"]);
	});

	test("a lock left by a dead process is taken over; a live holder's lock makes the write wait, then fail with a sentence", () => {
		const p = join(dir, "a2a-bridge.json");
		const cfg = loadConfig(p).config;
		writeFileSync(`${p}.lock`, "999999999");
		expect(addToken(p, cfg, "ci")).toMatch(BASE64URL_43);
		writeFileSync(`${p}.lock`, String(process.ppid));
		expect(() => addToken(p, cfg, "ci2")).toThrow(`another process holds ${p}.lock`);
		expect(JSON.parse(readFileSync(p, "utf8")).tokens.map((t: { name: string }) => t.name)).toEqual(["ci"]);
	}, 15_000);
});
