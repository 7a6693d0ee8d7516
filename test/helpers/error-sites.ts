/**
 * Finds every place in the product code that spells an error by hand instead of taking it from a
 * table: a JSON-RPC code literal, a `code:` number, an `error:` object literal, an `{error, code}`
 * body, a 4xx/5xx `status:` literal, a call of the envelope builder `routeRefusal` (any status goes in), and
 * each exported `*ERRORS` table. Read with the TypeScript
 * parser, so strings, comments and regular expressions never confuse it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

type SiteKind = "rpc-code" | "code-number" | "error-object" | "error-body" | "error-status" | "refusal-call" | "table";

export interface ErrorSite {
	kind: SiteKind;
	/** `file#name`: the file and the function, method or variable the site sits in ("" at the top level). */
	where: string;
	line: number;
	text: string;
}

const PRODUCT_DIRS = ["src", "extensions"];

function productFiles(root: string): string[] {
	const out: string[] = [];
	const walk = (dir: string): void => {
		for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
			const rel = `${dir}/${e.name}`;
			if (e.isDirectory()) walk(rel);
			else if (e.name.endsWith(".ts")) out.push(rel);
		}
	};
	for (const d of PRODUCT_DIRS) walk(d);
	return out.sort();
}

const nameOf = (n: ts.PropertyName | ts.BindingName | undefined): string =>
	n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : "";

/** The variable a function expression is assigned to, through parentheses and `as`. */
function assignedName(fn: ts.Node): string {
	let p = fn.parent;
	while (p && (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isSatisfiesExpression(p))) p = p.parent;
	return p && ts.isVariableDeclaration(p) ? nameOf(p.name) : "";
}

/** The innermost named function or method around `node`; outside any, the outermost variable ("" at the top). */
function ownerOf(node: ts.Node): string {
	let variable = "";
	for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
		if (ts.isFunctionDeclaration(p) || ts.isMethodDeclaration(p) || ts.isGetAccessor(p)) return nameOf(p.name);
		if (ts.isArrowFunction(p) || ts.isFunctionExpression(p)) {
			const n = assignedName(p);
			if (n !== "") return n;
		}
		if (ts.isVariableDeclaration(p)) variable = nameOf(p.name);
	}
	return variable;
}

const memberNames = (o: ts.ObjectLiteralExpression): string[] =>
	o.properties.map(p => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p) ? nameOf(p.name) : ""));

const isNumber = (e: ts.Expression): boolean =>
	ts.isNumericLiteral(e) ||
	(ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(e.operand));

/** Every error site in the product code under `root`. */
export function errorSites(root = "."): ErrorSite[] {
	const sites: ErrorSite[] = [];
	for (const file of productFiles(root)) {
		const text = readFileSync(join(root, file), "utf8");
		const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
		const add = (kind: SiteKind, node: ts.Node): void => {
			const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
			sites.push({ kind, where: `${file}#${ownerOf(node)}`, line, text: node.getText(sf).slice(0, 80) });
		};
		const visit = (node: ts.Node): void => {
			if (ts.isNumericLiteral(node) && /^32\d{3}$/.test(node.text)) {
				const p = node.parent;
				if (ts.isPrefixUnaryExpression(p) && p.operator === ts.SyntaxKind.MinusToken) add("rpc-code", p);
			}
			if (ts.isPropertyAssignment(node)) {
				const name = nameOf(node.name);
				if (name === "code" && isNumber(node.initializer)) add("code-number", node);
				if (name === "error" && ts.isObjectLiteralExpression(node.initializer)) add("error-object", node);
				const v = node.initializer;
				if (name === "status" && ts.isNumericLiteral(v) && Number(v.text) >= 400) add("error-status", node);
			}
			if (ts.isObjectLiteralExpression(node)) {
				const names = memberNames(node);
				if (names.includes("error") && names.includes("code")) add("error-body", node);
			}
			if (ts.isCallExpression(node)) {
				const callee = node.expression;
				const name = ts.isIdentifier(callee)
					? callee.text
					: ts.isPropertyAccessExpression(callee)
						? callee.name.text
						: "";
				if (name === "routeRefusal") add("refusal-call", node);
			}
			if (ts.isVariableDeclaration(node) && /(^|_)ERRORS$/.test(nameOf(node.name))) add("table", node.name);
			ts.forEachChild(node, visit);
		};
		visit(sf);
	}
	return sites;
}
