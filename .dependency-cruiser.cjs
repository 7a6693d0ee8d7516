/**
 * The layering rules of docs/architecture.md, written once as data and checked by `npm run layering`
 * (part of `npm test`). Paths are relative to the repository root. Parts are named by pattern, so a
 * new one is checked without editing the rules: under `src/`, the base folders are `core`, `config`
 * and `text`, and every other folder is a feature (host adapter, /blob, takeover, audit, headless, or
 * one added later); the protocol eras are the `Era` names in src/core/facts.ts, each the modules
 * `src/core/<era>*.ts`.
 */
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

/** The eras served (`Era` in src/core/facts.ts, without "unsupported"): a third one there is a third one here. */
function eraNames() {
	const facts = readFileSync(join(__dirname, "src", "core", "facts.ts"), "utf8");
	const union = /export type Era =([^;]+);/.exec(facts)?.[1] ?? "";
	const names = [...union.matchAll(/"([a-z][a-z0-9-]*)"/g)].map(m => m[1]).filter(n => n !== "unsupported");
	if (names.length < 2) throw new Error(".dependency-cruiser.cjs: no eras found in the Era type of src/core/facts.ts");
	return names;
}
const ERAS = eraNames().join("|");
/** Folders every part may build on; any other folder under src/ is a feature. */
const BASE = "core|config|text";

module.exports = {
	forbidden: [
		{
			name: "core-reaches-no-feature",
			comment:
				"The HTTP + JSON-RPC core knows HTTP and JSON-RPC only: it imports the base folders, no feature (host adapter, takeover, /blob, audit, headless, or any new folder).",
			severity: "error",
			from: { path: "^src/core/" },
			to: { path: "^src/", pathNot: `^src/(${BASE})/` },
		},
		{
			name: "only-the-entry-reaches-the-host-adapter",
			comment:
				"Features reach the host through the seams the entry fills (BridgeDeps, TakeoverHost), never through src/host/: /blob moves bytes on its own, never through the tool layer.",
			severity: "error",
			from: { path: "^src/", pathNot: "^src/host/" },
			to: { path: "^src/host/" },
		},
		{
			name: "features-share-types-only",
			comment:
				"A feature folder imports another feature only with `import type` (the audit record, the takeover's seam); the host adapter, which fills those seams, is the exception.",
			severity: "error",
			from: { path: `^src/(?!(?:${BASE}|host)/)([^/]+)/` },
			to: { path: `^src/(?!(?:${BASE})/)[^/]+/`, pathNot: "^src/$1/", dependencyTypesNot: ["type-only"] },
		},
		{
			name: "host-packages-only-in-entry-and-adapter",
			comment: "Only the entry and src/host/ import @oh-my-pi/* at run time; elsewhere `import type` only.",
			severity: "error",
			from: { path: "^src/", pathNot: "^src/host/" },
			to: { path: "@oh-my-pi/", dependencyTypesNot: ["type-only"] },
		},
		{
			name: "headless-host-without-bridge",
			comment:
				"The headless host drives omp over rpc; it never imports the bridge (entry, core, host adapter or any feature), only text helpers and the config's paths.",
			severity: "error",
			from: { path: "^(src/headless/|scripts/host\\.ts$)" },
			to: { path: "^(extensions/|src/(?!(?:text|config|headless)/))" },
		},
		{
			name: "config-builds-on-text-only",
			comment:
				"src/config/ is a base every part builds on (architecture.md): it imports nothing from src/ but itself and the text helpers.",
			severity: "error",
			from: { path: "^src/config/" },
			to: { path: "^src/", pathNot: "^src/(config|text)/" },
		},
		{
			name: "audit-imports-its-three-seams",
			comment:
				"src/audit/ imports only core's types (type-only), the whole-write primitive of config/disk.ts and errorText (architecture.md).",
			severity: "error",
			from: { path: "^src/audit/" },
			to: { path: "^src/", pathNot: "^src/(audit/|config/disk\\.ts$|text/error-text\\.ts$|core/types\\.ts$)" },
		},
		{
			name: "audit-takes-core-types-only",
			comment: "The audit log knows the core's record types, never its code.",
			severity: "error",
			from: { path: "^src/audit/" },
			to: { path: "^src/core/", dependencyTypesNot: ["type-only"] },
		},
		{
			name: "shared-types-are-a-leaf",
			comment: "src/core/types.ts is types only and depends on no implementation module.",
			severity: "error",
			from: { path: "^src/core/types\\.ts$" },
			to: { path: "^src/" },
		},
		{
			name: "eras-share-facts-not-each-other",
			comment:
				"The eras (the 2025 era legacy*.ts, the 2026-07-28 era modern*.ts, and any other named in Era) import nothing from each other; what they share is in core/facts.ts and the call table.",
			severity: "error",
			from: { path: `^src/core/(${ERAS})[^/]*\\.ts$` },
			to: { path: `^src/core/(${ERAS})[^/]*\\.ts$`, pathNot: "^src/core/$1[^/]*\\.ts$" },
		},
		{
			name: "text-helpers-are-a-leaf",
			comment:
				"src/text/ holds text helpers every part may use (the headless host too); it imports nothing else from src/.",
			severity: "error",
			from: { path: "^src/text/" },
			to: { path: "^src/", pathNot: "^src/text/" },
		},
		{
			name: "facts-are-a-leaf",
			comment: "src/core/facts.ts holds what both eras share and depends on no module.",
			severity: "error",
			from: { path: "^src/core/facts\\.ts$" },
			to: { path: "^src/" },
		},
		{
			name: "no-circular",
			comment: "Parts import one way (docs/architecture.md); a cycle means a part is in the wrong room.",
			severity: "error",
			from: { path: "^(src|extensions)/" },
			to: { circular: true },
		},
		{
			name: "no-test-code-in-product",
			comment: "Nothing the host loads imports tests, benchmarks or scripts.",
			severity: "error",
			from: { path: "^(src|extensions)/" },
			to: { path: "^(test|bench|scripts)/" },
		},
	],
	options: {
		doNotFollow: { path: "node_modules" },
		tsPreCompilationDeps: true,
		tsConfig: { fileName: "tsconfig.json" },
		enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
	},
};
