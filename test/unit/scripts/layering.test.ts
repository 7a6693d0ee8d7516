/**
 * The layering rules (.dependency-cruiser.cjs) name parts by pattern: planted in a copy of the tree, a
 * new feature folder and a third era are checked with the rules as they are (issue 32 item 7).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");
let copy = "";
let out = "";

/** One depcruise run over a copy of the product with every violation below planted at once. */
beforeAll(() => {
	copy = mkdtempSync(join(tmpdir(), "layering-"));
	for (const p of ["src", "extensions", "scripts", "tsconfig.json", "package.json", ".dependency-cruiser.cjs"]) {
		cpSync(join(ROOT, p), join(copy, p), { recursive: true });
	}
	symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
	const plant = (path: string, text: string) => {
		mkdirSync(join(copy, path, ".."), { recursive: true });
		writeFileSync(join(copy, path), text);
	};
	// A feature folder nobody named in the rules: it reaches the host adapter and /blob's code at run time.
	plant(
		"src/radio/route.ts",
		'import { mainCwd } from "../host/main.ts";\nimport { MAX_UPLOADS_IN_FLIGHT } from "../blob/parse.ts";\nexport const radio = () => [mainCwd(), MAX_UPLOADS_IN_FLIGHT];\n',
	);
	// The core reaching it.
	plant("src/core/radio-client.ts", 'import { radio } from "../radio/route.ts";\nexport const useRadio = radio;\n');
	// A third era, named in Era as the recipe says, importing the 2025 era.
	const facts = join(copy, "src/core/facts.ts");
	writeFileSync(
		facts,
		readFileSync(facts, "utf8").replace('export type Era = "modern"', 'export type Era = "future" | "modern"'),
	);
	plant("src/core/future.ts", 'import { LegacyMcp } from "./legacy.ts";\nexport const future = LegacyMcp;\n');
	// The config base reaching a feature, and the audit log reaching past its three seams (core code, /blob).
	plant("src/config/radio-name.ts", 'import { radio } from "../radio/route.ts";\nexport const radioName = radio;\n');
	plant(
		"src/audit/radio-audit.ts",
		'import { SERVER_NAME } from "../core/facts.ts";\nimport { MAX_UPLOADS_IN_FLIGHT } from "../blob/parse.ts";\nimport type { ServerInfo } from "../core/facts.ts";\nexport const a = [SERVER_NAME, MAX_UPLOADS_IN_FLIGHT] as const;\nexport type I = ServerInfo;\n',
	);
	// As `npm test` runs it (`bun run --bun`: dependency-cruiser refuses the machine's older node).
	const r = Bun.spawnSync([process.execPath, "run", "--bun", "layering"], { cwd: copy });
	out = r.stdout.toString() + r.stderr.toString();
});

afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe(".dependency-cruiser.cjs names parts by pattern", () => {
	const flagged = (rule: string, from: string, to: string) =>
		expect(out).toMatch(new RegExp(`${rule}: ${from.replaceAll(".", "\\.")} → ${to.replaceAll(".", "\\.")}`));

	test("a new feature folder reaching the host adapter is refused", () => {
		flagged("only-the-entry-reaches-the-host-adapter", "src/radio/route.ts", "src/host/main.ts");
	});
	test("a new feature folder using another feature's code at run time is refused", () => {
		flagged("features-share-types-only", "src/radio/route.ts", "src/blob/parse.ts");
	});
	test("the core reaching a new feature folder is refused", () => {
		flagged("core-reaches-no-feature", "src/core/radio-client.ts", "src/radio/route.ts");
	});
	test("the config base importing anything but itself and the text helpers is refused", () => {
		flagged("config-builds-on-text-only", "src/config/radio-name.ts", "src/radio/route.ts");
	});
	test("the audit log importing past its three seams is refused (core code, another feature, core types other than types.ts)", () => {
		flagged("audit-imports-its-three-seams", "src/audit/radio-audit.ts", "src/blob/parse.ts");
		flagged("audit-imports-its-three-seams", "src/audit/radio-audit.ts", "src/core/facts.ts");
		flagged("audit-takes-core-types-only", "src/audit/radio-audit.ts", "src/core/facts.ts");
	});
	test("a third era named in Era importing another era is refused", () => {
		flagged("eras-share-facts-not-each-other", "src/core/future.ts", "src/core/legacy.ts");
	});
});
