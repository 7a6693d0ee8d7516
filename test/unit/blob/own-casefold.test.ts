/**
 * Attack finding (rule 2 "one spelling per own path", case variants; low: needs a case-folding directory):
 * the own-path rule folds names with `toLowerCase`, but a Linux case-insensitive directory (ext4 or tmpfs
 * `casefold`, `chattr +F`) compares names by Unicode case folding, where `ſ` (U+017F) is `s` and `ﬆ` (U+FB06)
 * is `st`. So in such a directory `a2a-bridge.jſon` opens the config, yet the rule lets it through. (This
 * machine's kernel has no casefold support, so the open itself could not be shown here.)
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownFilesOf, ownName } from "../../../src/blob/own.ts";

describe("attack: own names compared by Unicode case folding", () => {
	test("`a2a-bridge.jſon` beside the config is refused like `A2A-BRIDGE.JSON`", () => {
		const dir = mkdtempSync(join(tmpdir(), "attack-fold-"));
		try {
			const config = join(dir, "a2a-bridge.json");
			writeFileSync(config, "{}");
			const files = ownFilesOf([config]);
			if (!files.ok) throw new Error(files.why);
			const seen = { path: dir, st: null };
			expect(ownName(files.files, seen, "A2A-BRIDGE.JSON")).not.toBeNull();
			expect(ownName(files.files, seen, "a2a-bridge.j\u017Fon")).not.toBeNull();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
