import { describe, expect, test } from "bun:test";
import { requestPath, requestTarget } from "../../../src/core/target.ts";

describe("requestTarget", () => {
	for (const [url, path, search] of [
		["http://127.0.0.1:9/mcp", "/mcp", ""],
		["http://127.0.0.1:9/blob?path=a%20b&offset=3", "/blob", "?path=a%20b&offset=3"],
		["http:///blob?path=x", "/blob", "?path=x"],
		["http://[::1/x", "/x", ""],
		["http://evil host/", "/", ""],
		["garbage", "/", ""],
	] as const) {
		test(`${url} -> ${path}${search} (never throws, whatever the Host)`, () => {
			const t = requestTarget(url);
			expect(t.pathname).toBe(path);
			expect(t.search).toBe(search);
		});
	}
});

describe("requestPath", () => {
	for (const [url, path] of [
		["http://127.0.0.1:9/mcp", "/mcp"],
		["http://127.0.0.1:9/blob?path=/x#frag", "/blob"],
		["http://127.0.0.1:9", "/"],
		["http://[::1/x?y", "/x"],
		["http://h/a/../mcp", "/a/../mcp"],
		["http://h/%6Dcp", "/%6Dcp"],
		["garbage", "/"],
	] as const) {
		test(`${url} -> ${path} (raw, never normalized into another route)`, () => {
			expect(requestPath(url)).toBe(path);
		});
	}
});
