/**
 * Finds every failure arm the product code spells: an object literal whose `ok` is `false` (a value) and a
 * type literal whose `ok` is the type `false` (a declaration), with the member names beside `ok`. Members a
 * spread adds are read from the object literals inside it. Read with the TypeScript parser, like error-sites.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

export interface FailureArm {
	/** `file:line` of the literal. */
	where: string;
	/** The members beside `ok`, sorted; `?` marks an optional one of a type literal. */
	keys: string[];
}

function sourceFiles(root: string, dir: string): string[] {
	const out: string[] = [];
	for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
		const rel = `${dir}/${e.name}`;
		if (e.isDirectory()) out.push(...sourceFiles(root, rel));
		else if (e.name.endsWith(".ts")) out.push(rel);
	}
	return out.sort();
}

const nameOf = (n: ts.PropertyName | undefined): string =>
	n && (ts.isIdentifier(n) || ts.isStringLiteral(n)) ? n.text : "";

const unwrap = (e: ts.Expression): ts.Expression =>
	ts.isAsExpression(e) || ts.isParenthesizedExpression(e) || ts.isSatisfiesExpression(e) ? unwrap(e.expression) : e;

/** The members an object literal sets, through spreads of literals (`...(x ? { a } : {})`). */
function objectKeys(o: ts.ObjectLiteralExpression): string[] {
	const keys: string[] = [];
	for (const p of o.properties) {
		if (ts.isSpreadAssignment(p)) {
			const visit = (n: ts.Node): void => {
				if (ts.isObjectLiteralExpression(n)) keys.push(...objectKeys(n));
				else n.forEachChild(visit);
			};
			visit(p.expression);
		} else keys.push(nameOf(p.name));
	}
	return keys;
}

const isFalseValue = (p: ts.ObjectLiteralElementLike): boolean =>
	ts.isPropertyAssignment(p) && nameOf(p.name) === "ok" && unwrap(p.initializer).kind === ts.SyntaxKind.FalseKeyword;

const isFalseType = (m: ts.TypeElement): boolean =>
	ts.isPropertySignature(m) &&
	nameOf(m.name) === "ok" &&
	m.type !== undefined &&
	ts.isLiteralTypeNode(m.type) &&
	m.type.literal.kind === ts.SyntaxKind.FalseKeyword;

/** Every failure arm under `dirs` of `root`. */
export function failureArms(root = ".", dirs: readonly string[] = ["src", "extensions"]): FailureArm[] {
	const arms: FailureArm[] = [];
	for (const file of dirs.flatMap(d => sourceFiles(root, d))) {
		const sf = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
		const add = (node: ts.Node, keys: string[]): void => {
			const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
			arms.push({ where: `${file}:${line}`, keys: [...new Set(keys.filter(k => k !== "ok"))].sort() });
		};
		const visit = (node: ts.Node): void => {
			if (ts.isObjectLiteralExpression(node) && node.properties.some(isFalseValue)) add(node, objectKeys(node));
			if (ts.isTypeLiteralNode(node) && node.members.some(isFalseType)) {
				add(
					node,
					node.members.map(m => `${nameOf(m.name)}${ts.isPropertySignature(m) && m.questionToken ? "?" : ""}`),
				);
			}
			node.forEachChild(visit);
		};
		visit(sf);
	}
	return arms;
}

/** The distinct member sets, each with how many arms use it. */
export function shapesOf(arms: readonly FailureArm[]): Map<string, number> {
	const shapes = new Map<string, number>();
	for (const a of arms) shapes.set(a.keys.join("+"), (shapes.get(a.keys.join("+")) ?? 0) + 1);
	return shapes;
}
