/** fast-check arbitraries for hostile HTTP requests to the bridge (used by unit and end-to-end fuzzing), and text. */
import fc from "fast-check";

/** Code points past the surrogates: an index at or above SURROGATES_START skips the 2,048 of them. */
const SURROGATES_START = 0xd800;
const SURROGATES = 0x800;

/**
 * Any code point but a lone surrogate, as `fc.string({ unit: "binary" })` draws, without its one-off cost:
 * building that arbitrary maps all 1.1 million code points back to indexes (3 to 4 s on a loaded machine),
 * and the first test of a process to build it pays that against bun's 5 s default timeout.
 */
export const anyText = (length: { minLength?: number; maxLength: number }): fc.Arbitrary<string> =>
	fc
		.array(
			fc
				.integer({ min: 0, max: 0x10ffff - SURROGATES })
				.map(n => String.fromCodePoint(n < SURROGATES_START ? n : n + SURROGATES)),
			length,
		)
		.map(points => points.join(""));

// Weights keep most samples past the first guards, so the deeper stages get fuzzed too.
const methodArb = fc.oneof(
	{ arbitrary: fc.constant("POST"), weight: 6 },
	fc.constantFrom("GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH"),
	fc.stringMatching(/^[A-Z]{1,8}$/),
);
// `/blob` queries: relative names only, so an upload stays inside the working directory. The one nested name has a
// parent ("Sub") no random name can be, so an earlier upload never makes that parent a file (an honest 500).
const blobQueryArb = fc
	.record({
		path: fc.oneof(fc.stringMatching(/^[a-z0-9._-]{1,12}$/), fc.constantFrom("", "~", "%00", "Sub%2Fb", "~/x")),
		offset: fc.option(fc.oneof(fc.nat({ max: 64 }).map(String), fc.constantFrom("-1", "x", "1e3", "", "0x10"))),
	})
	.map(q => `/blob?path=${q.path}${q.offset === null ? "" : `&offset=${q.offset}`}`);
const pathArb = fc.oneof(
	{ arbitrary: fc.constantFrom("/", "/mcp"), weight: 6 },
	{ arbitrary: blobQueryArb, weight: 2 },
	fc.constantFrom("/", "/mcp", "/blob", "/host-llm", "/.well-known/oauth-authorization-server", "/register", "/x"),
	fc.webPath(),
	fc.constantFrom("/mcp/", "//", "/%2e%2e/", "/blob?path=%00", "/?a=b"),
);
const authArb = (TOKEN: string) =>
	fc.oneof(
		{ arbitrary: fc.constant(`Bearer ${TOKEN}`), weight: 6 },
		fc.constant(`bearer ${TOKEN}`),
		fc.constant(`Bearer ${TOKEN} `),
		fc.constant(`Bearer ${TOKEN.slice(0, -1)}`),
		fc.constant(`Basic ${TOKEN}`),
		fc.constant("Bearer"),
		fc.constant(""),
		fc.string(),
		fc.constant(undefined),
	);
const hostArb = fc.oneof(
	{ arbitrary: fc.constant("127.0.0.1:9"), weight: 6 },
	fc.constantFrom("127.0.0.1:9", "localhost:9", "[::1]:9", "evil.example", "127.0.0.1.evil.example", "", "[::1"),
	fc.domain(),
);
const originArb = fc.oneof(
	{ arbitrary: fc.constant(undefined), weight: 6 },
	fc.constantFrom("http://127.0.0.1:9", "http://evil.example", "null", "not a url", "http://localhost:9"),
	fc.webUrl(),
);
const versionArb = fc.oneof(
	fc.constant(undefined),
	fc.constantFrom("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2024-11-05", ""),
	fc.string(),
);

const idArb = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.boolean(), fc.object());
const messageArb = fc.oneof(
	fc.record({
		jsonrpc: fc.constantFrom("2.0", "1.0", 2),
		id: idArb,
		method: fc.constantFrom("initialize", "ping", "tools/list", "tools/call", "resources/list", "", "x"),
		params: fc.oneof(
			fc.constant(undefined),
			fc.record({ name: fc.oneof(fc.constant("read"), fc.string(), fc.integer()), arguments: fc.anything() }),
			fc.anything(),
		),
	}),
	fc.record({ jsonrpc: fc.constant("2.0"), method: fc.constantFrom("notifications/cancelled", "notifications/x") }),
	fc.record({ jsonrpc: fc.constant("2.0"), id: idArb, result: fc.anything() }),
	fc.anything(),
);
// `/host-llm` bodies: the toggle and near misses (fuzzed only where the takeover is a fake).
const toggleBodyArb = fc.oneof(
	fc.record({ enabled: fc.oneof(fc.boolean(), fc.anything()) }).map(b => JSON.stringify(b)),
	fc.constantFrom('{"enabled":false}', '{"enabled":true}', "[]", "null", `{"enabled":${"1".repeat(2000)}}`),
);
const bodyArb: fc.Arbitrary<Uint8Array | string | undefined> = fc.oneof(
	messageArb.map(m => JSON.stringify(m) ?? "null"),
	messageArb.map(m => (JSON.stringify(m) ?? "").slice(0, -1)),
	fc.array(messageArb, { maxLength: 3 }).map(a => JSON.stringify(a)),
	fc.constantFrom("1e999999", "-0", "123456789012345678901234567890", '{"jsonrpc":"2.0","id":1e400,"method":"ping"}'),
	fc.integer({ min: 1, max: 2000 }).map(n => `${"[".repeat(n)}${"]".repeat(n)}`),
	fc.uint8Array({ maxLength: 64 }),
	fc.constant(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])),
	fc.string(),
	fc.constant(undefined),
);

/** Requests aimed at the extra routes, mostly with their own methods (for a fuzz of the real routes). */
export const routeArbs = {
	methods: fc.oneof({ arbitrary: fc.constantFrom("GET", "POST", "HEAD"), weight: 6 }, methodArb),
	paths: fc.oneof(
		{ arbitrary: blobQueryArb, weight: 4 },
		{ arbitrary: fc.constant("/host-llm"), weight: 3 },
		fc.constantFrom("/blob", "/blob?path=seed.txt", "/blob?path=seed.txt&offset=10", "/host-llm?x=1"),
	),
	bodies: toggleBodyArb,
	// Mostly past the pipeline's guards (fuzzed on their own elsewhere), so the route's own code is hit.
	passGuards: true,
};

export interface RequestArbOptions {
	methods?: fc.Arbitrary<string>;
	paths?: fc.Arbitrary<string>;
	/** Added to the hostile bodies, one sample in two. */
	bodies?: fc.Arbitrary<string>;
	/** Token, Host, Origin and protocol version right in nine samples of ten. */
	passGuards?: boolean;
}

const mostly = <T>(good: T, rest: fc.Arbitrary<T>, on: boolean | undefined): fc.Arbitrary<T> =>
	on ? fc.oneof({ arbitrary: fc.constant(good), weight: 9 }, rest) : rest;

export const requestArb = (TOKEN: string, o: RequestArbOptions = {}) =>
	fc.record({
		method: o.methods ?? methodArb,
		path: o.paths ?? pathArb,
		auth: mostly<string | undefined>(`Bearer ${TOKEN}`, authArb(TOKEN), o.passGuards),
		host: mostly("127.0.0.1:9", hostArb, o.passGuards),
		origin: mostly<string | undefined>(undefined, originArb, o.passGuards),
		version: mostly<string | undefined>(undefined, versionArb, o.passGuards),
		session: fc.oneof(fc.constant("issued"), fc.constant(undefined), fc.string()),
		accept: fc.constantFrom(undefined, "application/json, text/event-stream", "*/*", "text/html"),
		range: fc.option(fc.constantFrom("bytes=0-3", "bytes=5-", "bytes=-2", "bytes=9-1", "items=0-1", "bytes=0-1,3-4"), {
			nil: undefined,
		}),
		body: o.bodies ? fc.oneof(bodyArb, o.bodies) : bodyArb,
	});

export type Sample = ReturnType<typeof requestArb> extends fc.Arbitrary<infer T> ? T : never;

/** The sample as a Request to `base`, or null when it is not representable over HTTP. */
export function buildRequest(s: Sample, base: string, issued: string): Request | null {
	const headers = new Headers();
	try {
		if (s.auth !== undefined) headers.set("authorization", s.auth);
		headers.set("host", s.host);
		if (s.origin !== undefined) headers.set("origin", s.origin);
		if (s.version !== undefined) headers.set("mcp-protocol-version", s.version);
		if (s.session !== undefined) headers.set("mcp-session-id", s.session === "issued" ? issued : s.session);
		if (s.accept !== undefined) headers.set("accept", s.accept);
		if (s.range !== undefined) headers.set("range", s.range);
		const hasBody = s.body !== undefined && s.method !== "GET" && s.method !== "HEAD";
		return new Request(`${base}${s.path}`, {
			method: s.method,
			headers,
			...(hasBody ? { body: s.body } : {}),
		});
	} catch {
		// The sample is not a representable HTTP request (e.g. a header with a newline): skip it.
		return null;
	}
}
