import { describe, expect, test } from "bun:test";
import { observePid, trustEntry } from "../../../src/config/pids.ts";

describe("pid facts", () => {
	test("observePid: this process is mine with its /proc start time; a pid past the kernel's limit is gone", () => {
		const me = observePid(process.pid);
		expect(me.kind).toBe("mine");
		const start = me.kind === "mine" ? (me.start ?? 0) : 0;
		// Started before this test ran, and not long before the test file was loaded.
		expect(start).toBeLessThanOrEqual(Date.now());
		expect(start).toBeGreaterThan(Date.now() - 3_600_000);
		expect(observePid(process.pid)).toEqual(me);
		expect(observePid(2 ** 22 + 1)).toEqual({ kind: "gone" });
	});

	test("trustEntry (issue 20 item 7): exited, another user's, a reused pid, or no start time -> not trusted", () => {
		const entry = { pid: 4242, start: 1_700_000_000_000 };
		const cases: Array<[Parameters<typeof trustEntry>[1], Partial<typeof entry>, RegExp]> = [
			[{ kind: "gone" }, {}, /names pid 4242, which has exited/],
			[{ kind: "other_user" }, {}, /another user's process/],
			[{ kind: "mine", start: entry.start + 10 }, {}, /started at another time \(a reused pid\)/],
			[{ kind: "mine", start: entry.start }, { start: undefined }, /without its start time/],
			[{ kind: "mine", start: undefined }, {}, /whose start time this system does not show/],
		];
		for (const [facts, change, why] of cases) {
			const r = trustEntry({ ...entry, ...change }, facts);
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.why).toMatch(why);
		}
		expect(trustEntry(entry, { kind: "mine", start: entry.start })).toEqual({ ok: true });
	});
});
