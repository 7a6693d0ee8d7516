import { describe, expect, test } from "bun:test";
import { requestTarget } from "../../src/target.ts";

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
