/**
 * The testing knobs shorten the contract's bounds, never lift them (one clamp, src/config/knobs.ts), and
 * the environment is read by the entries alone: no module under src/ touches it, and the bridge's entry
 * hands it whole to the readers instead of picking variables out itself.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BLOB_STALL_MS } from "../../../src/blob/stall.ts";
import { type Knobs, knob, readKnobs } from "../../../src/config/knobs.ts";
import { IDLE_TIMEOUT_S } from "../../../src/core/idle.ts";
import { PROGRESS_MIN_INTERVAL_MS } from "../../../src/core/progress.ts";
import { SESSION_TTL_MS } from "../../../src/core/sessions.ts";
import { TASK_WINDOW_MS } from "../../../src/core/task-wire.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
/** The bounds as the entry hands them in (extensions/a2a-bridge.ts, KNOB_BOUNDS). */
const BOUNDS: Knobs = {
	sessionTtlMs: SESSION_TTL_MS,
	idleTimeoutS: IDLE_TIMEOUT_S,
	blobStallMs: BLOB_STALL_MS,
	progressIntervalMs: PROGRESS_MIN_INTERVAL_MS,
	taskWindowMs: TASK_WINDOW_MS,
};
const VARIABLE: Record<keyof Knobs, string> = {
	sessionTtlMs: "A2A_BRIDGE_SESSION_TTL_MS",
	idleTimeoutS: "A2A_BRIDGE_IDLE_TIMEOUT_S",
	blobStallMs: "A2A_BRIDGE_BLOB_STALL_MS",
	progressIntervalMs: "A2A_BRIDGE_PROGRESS_INTERVAL_MS",
	taskWindowMs: "A2A_BRIDGE_TASK_WINDOW_MS",
};
const ZERO_IS_A_VALUE = new Set<keyof Knobs>(["progressIntervalMs", "taskWindowMs"]);

describe("the bounds are the contract's", () => {
	test("24 h sessions, 30 s idle and stall (§15), 250 ms pacing, a window of at most 2 s (§17)", () => {
		expect(BOUNDS).toEqual({
			sessionTtlMs: 24 * 60 * 60 * 1000,
			idleTimeoutS: 30,
			blobStallMs: 30_000,
			progressIntervalMs: 250,
			taskWindowMs: 1000,
		});
	});
});

describe("readKnobs: each knob can shorten its bound, none can lift it", () => {
	for (const key of Object.keys(VARIABLE) as Array<keyof Knobs>) {
		const read = (v: string | undefined) => readKnobs({ [VARIABLE[key]]: v }, BOUNDS)[key];
		test(`${VARIABLE[key]}: above the bound, infinite, negative, junk or absent -> the bound`, () => {
			for (const v of ["1e12", "1e300", "Infinity", "-Infinity", "-5", "abc", "NaN", "", "  ", "0x", undefined]) {
				expect({ v, got: read(v) }).toEqual({ v, got: BOUNDS[key] });
			}
		});
		test(`${VARIABLE[key]}: a shorter value is taken; 0 ${ZERO_IS_A_VALUE.has(key) ? "is a value" : "is junk"}`, () => {
			expect(read("2")).toBe(2);
			expect(read(String(BOUNDS[key]))).toBe(BOUNDS[key]);
			expect(read("0")).toBe(ZERO_IS_A_VALUE.has(key) ? 0 : BOUNDS[key]);
		});
	}

	test("the session TTL knob is clamped too (it once lifted the 24 h bound to any number)", () => {
		expect(readKnobs({ A2A_BRIDGE_SESSION_TTL_MS: "1e15" }, BOUNDS).sessionTtlMs).toBe(SESSION_TTL_MS);
		expect(readKnobs({ A2A_BRIDGE_SESSION_TTL_MS: "1500" }, BOUNDS).sessionTtlMs).toBe(1500);
	});

	test("idle seconds are whole and at least 1 (Bun's 0 would mean no idle bound at all)", () => {
		const idle = (v: string) => readKnobs({ A2A_BRIDGE_IDLE_TIMEOUT_S: v }, BOUNDS).idleTimeoutS;
		expect([idle("2.4"), idle("2.6"), idle("0.4"), idle("29.9")]).toEqual([2, 3, 1, 30]);
	});

	test("knob: never above the bound it is given, for any input", () => {
		for (const raw of ["5", "5e5", "1e400", "-0", "0", " 7 ", "+3", "1_000"]) {
			for (const bound of [0, 1, 250, 30_000]) {
				const got = knob(raw, bound, { zero: true });
				expect({ raw, bound, ok: got >= 0 && got <= bound }).toEqual({ raw, bound, ok: true });
			}
		}
	});
});

/** Every .ts file under `dir` (relative to the root). */
const sources = (dir: string): string[] =>
	readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
		.filter(f => f.endsWith(".ts"))
		.map(f => `${dir}/${f}`);
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");
/** Any way to the environment: process.env (also as process["env"]), Bun.env, import.meta.env, node:process's env. */
const ENV_ACCESS = new RegExp(
	[
		/\b(?:process|Bun)\s*(?:\.\s*env\b|\[\s*["'`]env["'`]\s*\])/.source,
		/\bimport\.meta\.env\b/.source,
		// `env` by name, or the whole module (default or namespace import) from node:process.
		/import\s*(?:\{[^}]*\benv\b[^}]*\}|(?:\*\s*as\s+)?\w+)[^;]*?from\s*["'](?:node:)?process["']/.source,
	].join("|"),
);

describe("the environment is read by the entries only", () => {
	test("no module under src/ reads it: the entry hands in paths and knobs as values", () => {
		const readers = sources("src").filter(f => ENV_ACCESS.test(read(f)));
		expect(readers).toEqual([]);
	});

	test("the pattern catches each way in (so the check above can fail)", () => {
		for (const line of [
			"const x = process.env.A;",
			"const y = process . env;",
			'const z = process["env"];',
			"const w = Bun.env.B;",
			"const v = import.meta.env.C;",
			'import { env } from "node:process";',
			'import process from "process";',
			'import * as p from "node:process";',
			'import { arch, env as e } from "node:process";',
		]) {
			expect({ line, caught: ENV_ACCESS.test(line) }).toEqual({ line, caught: true });
		}
		for (const line of ["const environment = processEnv;", 'import { arch } from "node:process";']) {
			expect({ line, caught: ENV_ACCESS.test(line) }).toEqual({ line, caught: false });
		}
	});

	test("the bridge's entry picks no variable out itself: it passes process.env whole to the readers", () => {
		const entry = read("extensions/a2a-bridge.ts");
		expect(entry.match(/\bprocess\.env\s*(?:\.|\[)/g) ?? []).toEqual([]);
		expect(entry).toContain("readKnobs(process.env, KNOB_BOUNDS)");
	});
});
