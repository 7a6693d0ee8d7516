/** The size check of `npm run unused` (scripts/long-functions.ts): where the function bound of 60 lines bites. */
import { describe, expect, test } from "bun:test";
import { longFunctions } from "../../../scripts/long-functions.ts";

/** A function of exactly `n` lines, its first and last included, in the shape `shape` gives it. */
const fn = (n: number, shape: (body: string) => string) =>
	shape(Array.from({ length: n - 2 }, (_, i) => `\tconst v${i} = ${i};`).join("\n"));

describe("longFunctions", () => {
	test("60 lines pass, 61 do not: declarations, arrows, methods and nested callbacks alike", () => {
		const shapes: Array<[string, (body: string) => string]> = [
			["decl", b => `export function decl(): void {\n${b}\n}`],
			["arrow", b => `const arrow = (): void => {\n${b}\n};`],
			["method", b => `class K {\n\tmethod(): void {\n${b}\n\t}\n}`],
		];
		for (const [name, shape] of shapes) {
			expect(longFunctions("x.ts", fn(60, shape))).toEqual([]);
			expect(longFunctions("x.ts", fn(61, shape))).toMatchObject([{ name, lines: 61 }]);
		}
		// A long callback is named for its place and counts in its parent too.
		const nested = `function outer(): void {\n\tsetTimeout(() => {\n${fn(61, b => b)}\n\t}, 1);\n}`;
		expect(longFunctions("x.ts", nested).map(f => f.name)).toEqual(["outer", "(anonymous)"]);
	});

	test("a leading comment does not count; a signature over several lines does", () => {
		const doc = `/**\n${" * why\n".repeat(10)} */\n${fn(60, b => `function a(): void {\n${b}\n}`)}`;
		expect(longFunctions("x.ts", doc)).toEqual([]);
		const wide = fn(60, b => `function b(\n\tx: number,\n): void {\n${b}\n}`);
		expect(longFunctions("x.ts", wide)).toMatchObject([{ name: "b", lines: 62 }]);
	});
});
