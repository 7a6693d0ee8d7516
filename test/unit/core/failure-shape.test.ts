/**
 * One refusal shape (issue 41 item 6): every failure arm in the product code, value or type, is
 * `Refused` (core/types.ts): `why`, a `code` where the caller tells failures apart, and beside them only
 * data a caller reads, named below. The one arm without `why` is a caught throw (`Settled`), kept to rethrow.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FailureArm, failureArms, shapesOf } from "../../helpers/failure-arms.ts";

/** Data a refusal carries beside its sentence, each read by its caller. */
const NAMED_DATA: Record<string, string> = {
	held: "core/holdings.ts: the count a share refusal names (the host's prompt queue words it)",
	size: "blob/staging.ts: the bytes staged, sent back as upload-offset with offset_mismatch",
	field: "config: where in the file the broken rule sits (tokens[2].name)",
};

/** Why an arm is off the shape, or null when it is on it. */
function offShape(arm: FailureArm): string | null {
	const keys = arm.keys.map(k => k.replace(/\?$/, ""));
	if (keys.length === 1 && keys[0] === "error") return null;
	if (!keys.includes("why")) return "no `why`";
	const other = keys.filter(k => k !== "why" && k !== "code" && !Object.hasOwn(NAMED_DATA, k));
	return other.length === 0 ? null : `carries ${other.map(k => `\`${k}\``).join(", ")}`;
}

const offenders = (arms: readonly FailureArm[]): string[] =>
	arms.flatMap(a => {
		const why = offShape(a);
		return why === null ? [] : [`${a.where}: ${why}`];
	});

describe("failure arms in src/ and extensions/", () => {
	const arms = failureArms();

	test("the scan finds the arms (a broken walk would pass everything)", () => {
		expect(arms.length).toBeGreaterThan(50);
		expect(arms.some(a => a.where.startsWith("src/core/types.ts:"))).toBe(true);
	});

	test("every arm is a Refused (why, code?, named data) or a caught throw", () => {
		expect(offenders(arms)).toEqual([]);
	});

	test("every named datum is still carried somewhere (the list does not outlive its use)", () => {
		const used = new Set(arms.flatMap(a => a.keys.map(k => k.replace(/\?$/, ""))));
		expect(Object.keys(NAMED_DATA).filter(k => !used.has(k))).toEqual([]);
	});

	test("the shapes in use: why, code+why, and each named datum beside them", () => {
		const shapes = [...shapesOf(arms).keys()].map(s => s.replace("?", "")).sort();
		expect([...new Set(shapes)]).toEqual(["code+held+why", "code+size+why", "code+why", "error", "field+why", "why"]);
	});
});

describe("the check sees a planted arm of another shape", () => {
	const root = mkdtempSync(join(tmpdir(), "failure-shape-"));
	afterAll(() => rmSync(root, { recursive: true, force: true }));
	mkdirSync(join(root, "src"));
	const plant = (name: string, text: string): FailureArm[] => {
		writeFileSync(join(root, "src", name), text);
		return failureArms(root, ["src"]).filter(a => a.where.startsWith(`src/${name}:`));
	};

	test.each([
		["kind", "export const f = () => ({ ok: false, kind: 'unauthorized' });", "no `why`"],
		["message", "export const f = () => ({ ok: false as const, message: 'bad' });", "no `why`"],
		["id beside why", "export const f = (id: number) => ({ ok: false, why: 'bad', id });", "carries `id`"],
		["spread", "export const f = (x?: number) => ({ ok: false, why: 'b', ...(x ? { at: x } : {}) });", "carries `at`"],
		["type", "export type T = { ok: true } | { ok: false; kind: string };", "no `why`"],
	])("%s", (name, text, want) => {
		const arms = plant(`${name.replace(/ /g, "-")}.ts`, text);
		expect(arms.map(offShape)).toEqual([want]);
	});

	test("the one shape passes", () => {
		const arms = plant("fine.ts", "export const f = () => ({ ok: false, code: 'x', why: 'because' });");
		expect(arms.map(offShape)).toEqual([null]);
	});
});
