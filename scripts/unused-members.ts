/**
 * The unused-code check for class members, which knip 6 no longer reports: every member of a class
 * in the product (`src/`, `extensions/`), and every method of one of its interfaces, must be used
 * by product code (`src/`, `extensions/`, `scripts/`). A member only tests or benchmarks use fails,
 * as an export does under `knip --production`. Run by `npm run unused`; exits 1 naming each member.
 */
import { relative } from "node:path";
import ts from "typescript";

const ROOT = process.argv[2] ?? process.cwd();
const PRODUCT = /^(src|extensions)\//;
const USERS = /^(src|extensions|scripts)\//;

function languageService(root: string): ts.LanguageService {
	const parsed = ts.getParsedCommandLineOfConfigFile(
		`${root}/tsconfig.json`,
		{},
		{
			...ts.sys,
			onUnRecoverableConfigFileDiagnostic: d => {
				throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
			},
		},
	);
	if (!parsed) throw new Error(`no tsconfig.json in ${root}`);
	const host: ts.LanguageServiceHost = {
		getCompilationSettings: () => parsed.options,
		getScriptFileNames: () => parsed.fileNames,
		getScriptVersion: () => "1",
		getScriptSnapshot: f => (ts.sys.fileExists(f) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(f) ?? "") : undefined),
		getCurrentDirectory: () => root,
		getDefaultLibFileName: o => ts.getDefaultLibFilePath(o),
		fileExists: ts.sys.fileExists,
		readFile: ts.sys.readFile,
		readDirectory: ts.sys.readDirectory,
		directoryExists: ts.sys.directoryExists,
		getDirectories: ts.sys.getDirectories,
	};
	return ts.createLanguageService(host, ts.createDocumentRegistry());
}

/** Members to check: a class's own (not `#private`, `private`, or the constructor), an interface's methods. */
function membersOf(sf: ts.SourceFile): Array<{ owner: string; member: ts.NamedDeclaration & { name: ts.Identifier } }> {
	const out: Array<{ owner: string; member: ts.NamedDeclaration & { name: ts.Identifier } }> = [];
	const visit = (node: ts.Node): void => {
		if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name) {
			for (const m of node.members) {
				const isPrivate = ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Private;
				if (m.name && ts.isIdentifier(m.name) && !isPrivate) {
					out.push({ owner: node.name.text, member: m as ts.NamedDeclaration & { name: ts.Identifier } });
				}
			}
		}
		if (ts.isInterfaceDeclaration(node)) {
			for (const m of node.members) {
				if (ts.isMethodSignature(m) && ts.isIdentifier(m.name)) {
					out.push({ owner: node.name.text, member: m as ts.NamedDeclaration & { name: ts.Identifier } });
				}
			}
		}
		ts.forEachChild(node, visit);
	};
	visit(sf);
	return out;
}

/** Symbols product code reads or calls as a member (`a.b`, `a["b"]`, `const { b } = a`), found in one pass. */
function memberUses(program: ts.Program, files: readonly ts.SourceFile[]): Set<ts.Symbol> {
	const checker = program.getTypeChecker();
	const used = new Set<ts.Symbol>();
	const mark = (node: ts.Node): void => {
		const sym = checker.getSymbolAtLocation(node);
		if (sym) used.add(sym);
	};
	const visit = (node: ts.Node): void => {
		if (ts.isPropertyAccessExpression(node)) {
			const p = node.parent;
			const onlyWritten =
				ts.isBinaryExpression(p) && p.left === node && p.operatorToken.kind === ts.SyntaxKind.EqualsToken;
			if (!onlyWritten) mark(node.name);
		} else if (ts.isElementAccessExpression(node) && ts.isStringLiteral(node.argumentExpression)) {
			mark(node.argumentExpression);
		} else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
			const prop = checker.getTypeAtLocation(node.parent).getProperty(nameOf(node.propertyName ?? node.name));
			if (prop) used.add(prop);
		}
		ts.forEachChild(node, visit);
	};
	for (const sf of files) visit(sf);
	return used;
}

const nameOf = (n: ts.Node): string => (ts.isIdentifier(n) || ts.isStringLiteral(n) ? n.text : "");

const service = languageService(ROOT);
const program = service.getProgram();
if (!program) throw new Error("no program");
const checker = program.getTypeChecker();
const rel = (f: string): string => relative(ROOT, f);
const ours = program.getSourceFiles().filter(sf => USERS.test(rel(sf.fileName)));
const used = memberUses(program, ours);
const problems: string[] = [];
for (const sf of ours) {
	const file = rel(sf.fileName);
	if (!PRODUCT.test(file)) continue;
	for (const { owner, member } of membersOf(sf)) {
		const sym = checker.getSymbolAtLocation(member.name);
		if (sym && used.has(sym)) continue;
		// Not read as this symbol in one pass (e.g. reached through a structural type): ask for every reference.
		const refs = service.findReferences(sf.fileName, member.name.getStart(sf)) ?? [];
		const uses = refs.flatMap(r => r.references).filter(e => !e.isDefinition && !e.isWriteAccess);
		if (uses.some(e => USERS.test(rel(e.fileName)))) continue;
		const line = sf.getLineAndCharacterOfPosition(member.name.getStart(sf)).line + 1;
		const users = [...new Set(uses.map(e => rel(e.fileName)))];
		problems.push(
			`${owner}.${member.name.text}  ${file}:${line}  ${users.length ? `used only by ${users.join(", ")}` : "unused"}`,
		);
	}
}
if (problems.length > 0) {
	console.log(`Class and interface members no product code uses (${problems.length})`);
	for (const p of problems) console.log(p);
	process.exit(1);
}
console.log("class and interface members: each used by product code");
