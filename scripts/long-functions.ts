/**
 * The house size check (docs/architecture.md, "The rules, checked"): every function of the product (`src/`,
 * `extensions/`, `scripts/host.ts`) is at most MAX_LINES lines from its first token to its closing one, nested
 * functions counted in their parent too, and every module at most MAX_MODULE lines. Run by `npm run unused`;
 * exits 1 naming each one over. `ALLOWED` would name an exception the house style grants, with why (none now).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const MAX_LINES = 60;
const MAX_MODULE = 250;
/** `file:function` → why it may be longer (docs/architecture.md names it too). */
const ALLOWED: Readonly<Record<string, string>> = {};

const ROOT = process.argv[2] ?? process.cwd();

function files(dir: string): string[] {
	return readdirSync(dir).flatMap(name => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return files(path);
		return path.endsWith(".ts") ? [path] : [];
	});
}

/** A function's name for the report: its declaration's, its variable's or property's, else `(anonymous)`. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
	if (node.name !== undefined) return node.name.getText();
	if (ts.isConstructorDeclaration(node)) return "constructor";
	const parent = node.parent;
	if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name !== undefined) {
		return parent.name.getText();
	}
	return "(anonymous)";
}

/** Every function over `max` lines in `text`: its name, its length and its first line. @internal */
export function longFunctions(
	path: string,
	text: string,
	max = MAX_LINES,
): Array<{ name: string; lines: number; at: number }> {
	const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
	const out: Array<{ name: string; lines: number; at: number }> = [];
	const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
	const visit = (node: ts.Node): void => {
		if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
			const fn = node as ts.FunctionLikeDeclaration;
			const at = line(fn.getStart(source));
			const lines = line(fn.getEnd()) - at + 1;
			if (lines > max) out.push({ name: nameOf(fn), lines, at });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return out;
}

function main(): void {
	const checked = [...files(join(ROOT, "src")), ...files(join(ROOT, "extensions")), join(ROOT, "scripts/host.ts")];
	const over: string[] = [];
	for (const path of checked) {
		const text = readFileSync(path, "utf8");
		const file = relative(ROOT, path);
		const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
		if (lines > MAX_MODULE) over.push(`${file}: ${lines} lines (modules: at most ${MAX_MODULE})`);
		for (const f of longFunctions(path, text)) {
			const key = `${file}:${f.name}`;
			const said = `${file}:${f.at} ${f.name}: ${f.lines} lines (functions: at most ${MAX_LINES})`;
			if (ALLOWED[key] === undefined) over.push(said);
		}
	}
	if (over.length === 0) {
		console.log(`sizes: ${checked.length} modules, every other function within ${MAX_LINES} lines`);
		return;
	}
	console.log(`Over the house sizes (${over.length})\n${over.join("\n")}`);
	process.exit(1);
}

if (import.meta.main) main();
