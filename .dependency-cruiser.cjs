/**
 * The layering rules of docs/architecture.md, written once as data and checked by `npm run layering`
 * (part of `npm test`). Paths are relative to the repository root.
 */
module.exports = {
	forbidden: [
		{
			name: "core-reaches-no-feature",
			comment:
				"The HTTP + JSON-RPC core knows HTTP and JSON-RPC only: no host adapter, takeover, /blob, audit or headless code.",
			severity: "error",
			from: { path: "^src/core/" },
			to: { path: "^src/(host|takeover|blob|audit|headless)/" },
		},
		{
			name: "blob-bypasses-the-tool-layer",
			comment: "/blob moves bytes on its own; it never goes through the host adapter.",
			severity: "error",
			from: { path: "^src/blob/" },
			to: { path: "^src/host/" },
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
			comment: "The headless host drives omp over rpc; it never imports the bridge (entry, core or host adapter).",
			severity: "error",
			from: { path: "^(src/headless/|scripts/host\\.ts$)" },
			to: { path: "^(extensions/|src/(core|host|blob|takeover|audit)/)" },
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
				"The 2025 era (legacy.ts) and the 2026-07-28 era (modern*.ts) import nothing from each other; what both use is in core/facts.ts.",
			severity: "error",
			from: { path: "^src/core/(legacy|modern)[^/]*\\.ts$" },
			to: { path: "^src/core/(legacy|modern)[^/]*\\.ts$", pathNot: "^src/core/$1[^/]*\\.ts$" },
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
