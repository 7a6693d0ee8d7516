/**
 * The class-member pass of `npm run unused` (scripts/unused-members.ts), run on small throwaway trees:
 * a member only a test uses fails it, naming the member; the same member used by product code passes.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "..", "..", "..", "scripts", "unused-members.ts");
let root = "";

afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A tree with `src/store.ts` (a class and an interface) and the given product and test users. */
function tree(product: string, testUse: string): { code: number; out: string } {
	root = mkdtempSync(join(tmpdir(), "unused-members-"));
	for (const d of ["src", "test"]) mkdirSync(join(root, d));
	writeFileSync(
		join(root, "tsconfig.json"),
		JSON.stringify({ compilerOptions: { strict: true }, include: ["src", "test"] }),
	);
	writeFileSync(
		join(root, "src", "store.ts"),
		[
			"export interface Log { write(line: string): void; failures(): number }",
			"export class Store {",
			"\t#n = 0;",
			"\tadd(): void { this.#n++; }",
			"\tcount(): number { return this.#n; }",
			"}",
		].join("\n"),
	);
	writeFileSync(join(root, "src", "main.ts"), `import { Store, type Log } from "./store";\n${product}\n`);
	writeFileSync(join(root, "test", "store.test.ts"), `import { Store, type Log } from "../src/store";\n${testUse}\n`);
	const r = Bun.spawnSync([process.execPath, SCRIPT, root]);
	return { code: r.exitCode, out: r.stdout.toString() };
}

describe("scripts/unused-members.ts", () => {
	test("a class method and an interface method only a test calls fail, each named with its file and line", () => {
		const r = tree(
			"export const use = (s: Store, l: Log) => { s.add(); l.write('x'); };",
			"export const t = (s: Store, l: Log) => [s.count(), l.failures()];",
		);
		expect(r.code).toBe(1);
		expect(r.out).toContain("Store.count  src/store.ts:5  used only by test/store.test.ts");
		expect(r.out).toContain("Log.failures  src/store.ts:1  used only by test/store.test.ts");
		expect(r.out).not.toContain("Store.add");
	}, 30_000);

	test("the same members used by product code (a call, a destructured read) pass", () => {
		const r = tree(
			"export const use = (s: Store, l: Log) => { s.add(); const { count } = s; l.write(String(count.call(s) + l.failures())); };",
			"",
		);
		expect(r.out).toContain("each used by product code");
		expect(r.code).toBe(0);
	}, 30_000);
});
