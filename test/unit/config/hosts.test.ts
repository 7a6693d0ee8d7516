import { describe, expect, test } from "bun:test";
import { isLoopbackHost, normalizeOrigin, urlHost } from "../../../src/config/hosts.ts";

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
		// Issue 20 item 9: the IPv4-mapped loopback ::ffff:127.0.0.0/104, in each spelling.
		["::ffff:127.0.0.1", true],
		["[::FFFF:127.9.8.7]", true],
		["0:0:0:0:0:ffff:7f00:1", true],
		["::ffff:7fff:ffff", true],
		["0:0:0:0:0:0:0:1", true],
		["::ffff:128.0.0.1", false],
		["::ffff:10.0.0.1", false],
		["::ffff:127.0.0.1:80", false],
		["fe80::1", false],
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

describe("urlHost: an address as a URL's host", () => {
	for (const [host, want] of [
		["127.0.0.1", "127.0.0.1"],
		["localhost", "localhost"],
		["::1", "[::1]"],
		["[::1]", "[::1]"],
		["fe80::1", "[fe80::1]"],
	] as const) {
		test(`${host} -> ${want}`, () => {
			expect(urlHost(host)).toBe(want);
		});
	}
});
