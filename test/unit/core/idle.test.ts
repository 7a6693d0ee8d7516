import { describe, expect, test } from "bun:test";
import { stallMs } from "../../../src/blob/stall.ts";
import { IDLE_TIMEOUT_S, idleSeconds } from "../../../src/core/idle.ts";

describe("the testing knobs shorten the §15 bounds, never lift them", () => {
	test("idle seconds: whole, at least 1, at most 30; nonsense -> 30", () => {
		expect(idleSeconds(2)).toBe(2);
		expect(idleSeconds(2.4)).toBe(2);
		expect(idleSeconds(0)).toBe(1);
		expect(idleSeconds(-7)).toBe(1);
		expect(idleSeconds(1e12)).toBe(IDLE_TIMEOUT_S);
		expect(idleSeconds(Number.POSITIVE_INFINITY)).toBe(IDLE_TIMEOUT_S);
		expect(idleSeconds(Number.NaN)).toBe(IDLE_TIMEOUT_S);
	});

	test("upload stall: A2A_BRIDGE_BLOB_STALL_MS below 30 s is taken; above, garbage or missing -> 30 s", () => {
		expect(stallMs({ A2A_BRIDGE_BLOB_STALL_MS: "2000" })).toBe(2000);
		for (const v of ["1e12", "Infinity", "abc", "-5", "0", "", undefined]) {
			expect(stallMs({ A2A_BRIDGE_BLOB_STALL_MS: v })).toBe(30_000);
		}
	});
});
