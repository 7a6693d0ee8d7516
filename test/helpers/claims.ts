/**
 * What the claims tests (test/unit/docs/claims-*.test.ts) share: a repository file's text, the docs a reader
 * sees, and a private numeric constant of the code.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./host.ts";

export { ROOT };

export const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

export const DOCS = [
	"README.md",
	"README_ZN.md",
	...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
		.filter(f => f.endsWith(".md") && !f.startsWith(".vitepress"))
		.map(f => `docs/${f}`),
];

/** The value of `const NAME = <number expression>` in a source file, for limits the code keeps private. */
export function constIn(file: string, name: string): number {
	const m = new RegExp(`const ${name} = ([0-9_ *]+);`).exec(read(file));
	if (!m?.[1]) throw new Error(`${file}: no 'const ${name} = <number>'`);
	return m[1].split("*").reduce((n, f) => n * Number(f.trim().replace(/_/g, "")), 1);
}
