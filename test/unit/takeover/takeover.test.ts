import { describe, expect, test } from "bun:test";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { serveRoute } from "../../../src/core/route-kit.ts";
import {
	bypassesFetch,
	CLAIM_API_KEY,
	createTripwire,
	DENY_API,
	DENY_MESSAGE,
	type FetchFn,
	fingerprint,
	NOISY_SETTINGS,
	planClaims,
	requestHost,
	tripwireHosts,
	urlHost,
} from "../../../src/takeover/plan.ts";
import { createHostLlmRoute } from "../../../src/takeover/route.ts";
import { Takeover } from "../../../src/takeover/takeover.ts";
import {
	ANTHROPIC,
	CODEX,
	FakeHost,
	FakeSettings,
	OPENAI,
	PLACEHOLDER,
	row,
} from "../../helpers/fake-takeover-host.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";

function setup(host = new FakeHost()) {
	const records: AuditRecord[] = [];
	return { host, records, takeover: new Takeover(host, r => records.push(r)) };
}

describe("urlHost / tripwireHosts", () => {
	for (const [url, host] of [
		["https://api.anthropic.com/v1", "api.anthropic.com"],
		["https://API.Example.COM:443/v1", "api.example.com"], // default port dropped
		["http://127.0.0.1:80/v1", "127.0.0.1"],
		["http://127.0.0.1:4000/v1", "127.0.0.1:4000"],
		["wss://chatgpt.com/backend-api", "chatgpt.com"],
		["http://[::1]:8080/", "[::1]:8080"],
		["not a url", null],
		["", null],
	] as const) {
		test(`${JSON.stringify(url)} -> ${host}`, () => expect(urlHost(url)).toBe(host));
	}

	test("rows -> the distinct hosts of their baseUrls; unparsable ones skipped", () => {
		const hosts = tripwireHosts([
			PLACEHOLDER,
			ANTHROPIC,
			row("x", "a", "b", "https://api.anthropic.com/other"),
			row("y", "a", "b", ""),
		]);
		expect([...hosts].sort()).toEqual(["127.0.0.1:4000", "api.anthropic.com"]);
	});

	test("another port on the same address is another host (the bridge's own port stays reachable)", () => {
		expect(tripwireHosts([PLACEHOLDER]).has("127.0.0.1:4001")).toBe(false);
	});
});

describe("requestHost", () => {
	test("string, URL and Request inputs -> their host; anything else -> null", () => {
		expect(requestHost("https://api.anthropic.com/v1/messages")).toBe("api.anthropic.com");
		expect(requestHost(new URL("http://127.0.0.1:4000/v1/messages"))).toBe("127.0.0.1:4000");
		expect(requestHost(new Request("https://api.openai.com/v1/responses"))).toBe("api.openai.com");
		expect(requestHost("/relative")).toBeNull();
		expect(requestHost(42)).toBeNull();
	});
});

describe("bypassesFetch", () => {
	for (const [r, expected] of [
		[ANTHROPIC, true], // node:https
		[row("anthropic", "o", "anthropic-messages", "http://127.0.0.1:9/v1"), false], // not https: falls back to fetch
		[row("proxy", "o", "anthropic-messages", "https://api.anthropic.com"), false], // only provider 'anthropic'
		[CODEX, true], // WebSocket
		[row("cursor", "c", "cursor-agent", "https://api2.cursor.sh"), true], // http2
		[row("gitlab-duo", "g", "anthropic-messages", "https://gitlab.com"), true],
		[row("gl", "g", "gitlab-duo-agent", "https://gitlab.com"), true],
		[OPENAI, false],
		[PLACEHOLDER, false],
	] as const) {
		test(`${r.provider}/${r.api} ${r.baseUrl} -> ${expected}`, () => expect(bypassesFetch(r)).toBe(expected));
	}
});

describe("planClaims", () => {
	test("-> the providers with a fetch-bypassing row, sorted, once each", () => {
		expect(planClaims([CODEX, ANTHROPIC, { ...ANTHROPIC, id: "haiku" }, PLACEHOLDER])).toEqual({
			ok: true,
			value: ["anthropic", "openai-codex"],
		});
	});

	test("a transport on a claimed provider -> still armable", () => {
		expect(planClaims([{ ...ANTHROPIC, transport: "pi-native" }]).ok).toBe(true);
	});

	test("a transport on an unclaimed provider -> cannot_arm naming provider, model and transport", () => {
		const r = planClaims([ANTHROPIC, { ...OPENAI, transport: "pi-native" }]);
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.code).toBe("cannot_arm");
		expect(r.why).toContain("provider 'openai' (model gpt) has transport 'pi-native'");
	});
});

describe("fingerprint", () => {
	test("row order does not matter; other providers do not count", () => {
		const a = [ANTHROPIC, { ...ANTHROPIC, id: "haiku" }, OPENAI];
		expect(fingerprint(a, "anthropic", true)).toBe(
			fingerprint([{ ...ANTHROPIC, id: "haiku" }, ANTHROPIC], "anthropic", true),
		);
	});

	test("a changed api, baseUrl, transport, lost row or lost credential -> differs", () => {
		const before = fingerprint([ANTHROPIC], "anthropic", true);
		expect(fingerprint([{ ...ANTHROPIC, api: DENY_API }], "anthropic", true)).not.toBe(before);
		expect(fingerprint([{ ...ANTHROPIC, baseUrl: "https://x" }], "anthropic", true)).not.toBe(before);
		expect(fingerprint([{ ...ANTHROPIC, transport: "pi-native" }], "anthropic", true)).not.toBe(before);
		expect(fingerprint([], "anthropic", true)).not.toBe(before);
		expect(fingerprint([ANTHROPIC], "anthropic", false)).not.toBe(before);
	});
});

describe("createTripwire", () => {
	const hosts = new Set(["api.anthropic.com", "127.0.0.1:4000"]);
	const counting = () => {
		const seen: string[] = [];
		const f = (async (input: Parameters<FetchFn>[0]) => {
			seen.push(String(requestHost(input)));
			return new Response("passed");
		}) as unknown as FetchFn;
		return { seen, f };
	};

	test("a configured host -> 403 permission_error with the takeover text; nothing reaches the original", async () => {
		const { seen, f } = counting();
		const logs: string[] = [];
		const wire = createTripwire(
			f,
			hosts,
			() => true,
			l => logs.push(l),
		);
		const res = await wire("https://api.anthropic.com/v1/messages", { method: "POST" });
		expect(res.status).toBe(403); // a 4xx other than 408/429: providers do not retry it
		expect(await res.json()).toEqual({ type: "error", error: { type: "permission_error", message: DENY_MESSAGE } });
		expect(await (await wire(new Request("http://127.0.0.1:4000/v1/messages"))).status).toBe(403);
		expect(seen).toEqual([]);
		expect(logs.length).toBe(2);
	});

	test("any other host, or a tripwire no longer active -> passed to the original", async () => {
		const { seen, f } = counting();
		let active = true;
		const wire = createTripwire(
			f,
			hosts,
			() => active,
			() => {},
		);
		expect(await (await wire("http://127.0.0.1:4001/mcp")).text()).toBe("passed");
		active = false;
		expect(await (await wire("https://api.anthropic.com/v1/messages")).text()).toBe("passed");
		expect(seen).toEqual(["127.0.0.1:4001", "api.anthropic.com"]);
	});

	test("hosts added later are keyed on too", async () => {
		const { f } = counting();
		const live = new Set<string>();
		const wire = createTripwire(
			f,
			live,
			() => true,
			() => {},
		);
		live.add("api.openai.com");
		expect((await wire("https://api.openai.com/v1/responses")).status).toBe(403);
	});

	test("Bun's fetch.preconnect is carried over", () => {
		const { f } = counting();
		const preconnect = () => {};
		const wire = createTripwire(
			Object.assign(f, { preconnect }),
			hosts,
			() => true,
			() => {},
		);
		expect((wire as unknown as { preconnect: unknown }).preconnect).toBe(preconnect);
	});
});

describe("Takeover.arm / restore", () => {
	test("arm -> deny API, claims, tripwire, settings, Main's deny copy; state counts provider names", async () => {
		const { host, takeover } = setup();
		expect(takeover.arm().ok).toBe(true);
		expect(host.denyApi).toBe(true);
		expect(host.claimKeys).toEqual(["anthropic", "openai-codex"]);
		expect(host.models().filter(r => bypassesFetch(r) && r.api !== DENY_API)).toEqual([]);
		expect(host.main).toEqual({ ...PLACEHOLDER, api: DENY_API, transport: undefined });
		expect(host.fetchFn).not.toBe(host.original);
		expect((await host.fetchFn("https://api.openai.com/v1/responses")).status).toBe(403);
		const settings = host.settings as FakeSettings;
		expect([...settings.overrides.keys()].sort()).toEqual(
			NOISY_SETTINGS.map(([p]) => p)
				.filter(p => p !== "autolearn.enabled")
				.sort(),
		);
		expect(takeover.state()).toEqual({ enabled: false, denied: 3, degraded: false });
		expect(takeover.label()).toBe("deny");
		expect(CLAIM_API_KEY.length).toBeGreaterThan(0);
	});

	test("restore -> exactly what was there; overrides it did not set stay", () => {
		const host = new FakeHost();
		const settings = host.settings as FakeSettings;
		settings.override("todo.reminders", false); // someone else's override, already the deny value
		const { takeover } = setup(host);
		const before = { models: host.models(), main: host.main, fetch: host.fetchFn };
		takeover.arm();
		expect(takeover.restore()).toEqual([]);
		expect(host.models()).toEqual(before.models);
		expect(host.main).toBe(before.main);
		expect(host.fetchFn).toBe(before.fetch);
		expect(host.denyApi).toBe(false);
		expect([...settings.overrides.entries()]).toEqual([["todo.reminders", false]]);
		expect(takeover.state()).toEqual({ enabled: true, denied: 0, degraded: false });
		expect(host.lines).toEqual([]);
	});

	test("no live Main -> armed, degraded (tripwire only); Main's provider not counted", () => {
		const { takeover } = setup(new FakeHost(undefined, null));
		expect(takeover.arm().ok).toBe(true);
		expect(takeover.state()).toEqual({ enabled: false, denied: 2, degraded: true });
		expect(takeover.label()).toBe("deny (tripwire only)");
	});

	test("Main's row replaced while denied -> degraded; restore leaves it and says so", () => {
		const { host, takeover } = setup();
		takeover.arm();
		host.main = OPENAI;
		expect(takeover.state().degraded).toBe(true);
		const problems = takeover.restore();
		expect(problems).toEqual(["Main's model row was replaced while denied; left as it is"]);
		expect(host.main).toBe(OPENAI);
		expect(host.lines).toEqual([`a2a-bridge takeover: not restored: ${problems[0]}`]);
	});

	test("fetch wrapped again on top of the tripwire -> left in place as a pass-through, and named", async () => {
		const { host, takeover } = setup();
		takeover.arm();
		const tripwire = host.fetchFn;
		const outer = ((i: Parameters<FetchFn>[0], n?: Parameters<FetchFn>[1]) => tripwire(i, n)) as FetchFn;
		host.fetchFn = outer;
		expect(takeover.restore()).toEqual([
			"globalThis.fetch was wrapped again while denied; the tripwire stays as a pass-through",
		]);
		expect(host.fetchFn).toBe(outer);
		expect(await (await outer("https://api.anthropic.com/v1/messages")).text()).toBe("real network");
	});

	test("a provider that does not come back as snapshotted -> named", () => {
		const host = new FakeHost();
		host.loseAuthOf = "anthropic";
		const { takeover } = setup(host);
		takeover.arm();
		expect(takeover.restore()).toEqual(["provider 'anthropic' did not come back as it was before the claim"]);
	});

	test("a claim that does not take -> refused, every layer rolled back", () => {
		const host = new FakeHost();
		host.ignoreClaimOf = "openai-codex";
		const { takeover } = setup(host);
		const before = { models: host.models(), main: host.main, fetch: host.fetchFn };
		const r = takeover.arm();
		expect(r).toEqual({
			ok: false,
			code: "cannot_arm",
			why: "provider 'openai-codex' could not be claimed (its rows still bypass the deny)",
		});
		expect(host.models()).toEqual(before.models);
		expect(host.main).toBe(before.main);
		expect(host.fetchFn).toBe(before.fetch);
		expect(host.denyApi).toBe(false);
		expect((host.settings as FakeSettings).overrides.size).toBe(0);
		expect(takeover.state().enabled).toBe(true);
	});

	test("a transport on an unclaimed provider -> refused before the host is touched", () => {
		const host = new FakeHost([PLACEHOLDER, ANTHROPIC, { ...OPENAI, transport: "pi-native" }]);
		const { takeover } = setup(host);
		expect(takeover.arm().ok).toBe(false);
		expect(host.claimKeys).toEqual([]);
		expect(host.denyApi).toBe(false);
		expect(host.fetchFn).toBe(host.original);
	});

	test("arm again with a new Main session -> covers it and its settings; restore brings back the new row", () => {
		const { host, takeover } = setup();
		takeover.arm();
		const next = { ...OPENAI, id: "next" };
		const nextSettings = new FakeSettings();
		host.main = next;
		host.settings = nextSettings;
		expect(takeover.arm().ok).toBe(true);
		expect(host.main?.api).toBe(DENY_API);
		expect(nextSettings.get("retry.enabled")).toBe(false);
		expect(takeover.state().degraded).toBe(false);
		expect(takeover.restore()).toEqual([]);
		expect(host.main).toBe(next);
		expect(nextSettings.overrides.size).toBe(0);
	});

	test("registry settles later with new rows -> claimed again, new hosts keyed on, snapshot taken again", async () => {
		const { host, takeover } = setup();
		takeover.arm();
		host.static = [...host.static, row("cursor", "c", "cursor-agent", "https://api2.cursor.sh")];
		host.settle.resolve();
		await Bun.sleep(0);
		expect(host.claimed.has("cursor")).toBe(true);
		expect((await host.fetchFn("https://api2.cursor.sh/x")).status).toBe(403);
		expect(takeover.state()).toEqual({ enabled: false, denied: 4, degraded: false });
		expect(takeover.restore()).toEqual([]);
	});

	test("registry settles with a transport on an unclaimed provider -> degraded and logged, still armed", async () => {
		const { host, takeover } = setup();
		takeover.arm();
		host.static = [...host.static, { ...OPENAI, id: "t", transport: "pi-native" }];
		host.settle.resolve();
		await Bun.sleep(0);
		expect(takeover.state()).toMatchObject({ enabled: false, degraded: true });
		expect(host.lines.some(l => l.includes("only the tripwire covers this: provider 'openai'"))).toBe(true);
	});
});

describe("Takeover.toggle", () => {
	test("each toggle -> one done record {tool: host_llm, sid, isError, args: {enabled}}", () => {
		const { records, takeover } = setup();
		expect(takeover.toggle(false, "sid-1")).toEqual({
			ok: true,
			value: { enabled: false, denied: 3, degraded: false },
		});
		expect(takeover.toggle(true, null).ok).toBe(true);
		expect(records.map(({ id: _id, ...r }) => r)).toEqual([
			{ sid: "sid-1", phase: "done", tool: "host_llm", isError: false, args: { enabled: false } },
			{ sid: null, phase: "done", tool: "host_llm", isError: false, args: { enabled: true } },
		]);
	});

	test("a refused arming -> one isError record and a stderr line", () => {
		const { host, records, takeover } = setup(new FakeHost([{ ...OPENAI, transport: "pi-native" }]));
		expect(takeover.toggle(false, null).ok).toBe(false);
		expect(records.map(r => r.isError)).toEqual([true]);
		expect(host.lines[0]).toStartWith("a2a-bridge takeover: not armed: provider 'openai'");
	});
});

describe("createHostLlmRoute", () => {
	const post = (body: string) => new Request("http://127.0.0.1/host-llm", { method: "POST", body });
	const call = async (takeover: Takeover, req: Request, sid: string | null = null) => {
		const res = await serveRoute(createHostLlmRoute(takeover), req, routeCtx({ sid }));
		return { status: res.status, json: (await res.json()) as Record<string, unknown> };
	};

	test("methods -> GET and POST", () => {
		expect(createHostLlmRoute(setup().takeover).methods).toEqual(["GET", "POST"]);
	});

	test("GET -> {enabled, denied, degraded}", async () => {
		const { takeover } = setup();
		expect(await call(takeover, new Request("http://127.0.0.1/host-llm"))).toEqual({
			status: 200,
			json: { enabled: true, denied: 0, degraded: false },
		});
	});

	test("POST enabled:false then true -> state each time; the caller's sid audited", async () => {
		const { records, takeover } = setup();
		expect((await call(takeover, post('{"enabled":false}'), "s1")).json).toEqual({
			enabled: false,
			denied: 3,
			degraded: false,
		});
		expect((await call(takeover, post('{"enabled":true}'), "s1")).json).toEqual({
			enabled: true,
			denied: 0,
			degraded: false,
		});
		expect(records.map(r => r.sid)).toEqual(["s1", "s1"]);
	});

	for (const [body, why] of [
		["{}", "absent"],
		['{"enabled":"false"}', "a string"],
		['{"enabled":null}', "null"],
		['{"enabled":0}', "a number"],
		["[]", "an array"],
		["null", "null body"],
		["true", "a bare boolean"],
	] as const) {
		test(`enabled ${why} -> 400 invalid_body naming the field; nothing toggled or audited`, async () => {
			const { records, takeover } = setup();
			expect(await call(takeover, post(body))).toEqual({
				status: 400,
				json: { error: "field 'enabled' must be a boolean", code: "invalid_body" },
			});
			expect(records).toEqual([]);
			expect(takeover.state().enabled).toBe(true);
		});
	}

	test("not JSON -> 400 invalid_body", async () => {
		expect((await call(setup().takeover, post("enabled=false"))).json.code).toBe("invalid_body");
	});

	test("a body over 1 KiB -> 413, read no further", async () => {
		const r = await call(setup().takeover, post(`{"enabled":false,"pad":"${"x".repeat(1100)}"}`));
		expect(r).toEqual({ status: 413, json: { error: "request body larger than 1024 bytes", code: "body_too_large" } });
	});

	test("a refused arming -> 409 cannot_arm with the unchanged state and the reason", async () => {
		const { takeover } = setup(new FakeHost([{ ...OPENAI, transport: "pi-native" }]));
		const r = await call(takeover, post('{"enabled":false}'));
		expect(r.status).toBe(409);
		expect(r.json).toMatchObject({ enabled: true, denied: 0, degraded: false, code: "cannot_arm" });
		expect(String(r.json.error)).toContain("transport 'pi-native'");
	});
});
