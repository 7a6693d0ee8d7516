/** The tar reader that unpacks the docs site test's packaged browser (test/helpers/chromium.ts). */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { readTar } from "../../helpers/chromium.ts";

function tarOf(files: Record<string, string>, format: string): Uint8Array {
	const dir = mkdtempSync(join(tmpdir(), "a2a-tar-"));
	try {
		for (const [name, text] of Object.entries(files)) {
			mkdirSync(dirname(join(dir, "in", name)), { recursive: true });
			writeFileSync(join(dir, "in", name), text);
		}
		const made = Bun.spawnSync(["tar", `--format=${format}`, "-cf", join(dir, "a.tar"), "-C", join(dir, "in"), "."]);
		expect(made.exitCode).toBe(0);
		return readFileSync(join(dir, "a.tar"));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

describe("readTar", () => {
	const long = `${"d".repeat(60)}/${"e".repeat(60)}/${"f".repeat(70)}.txt`;
	for (const format of ["gnu", "pax", "ustar"]) {
		test(`${format}: files, directories and a name past 100 characters, with their bytes`, () => {
			const files =
				format === "ustar" ? { "a/b.txt": "bee", "c.txt": "" } : { "a/b.txt": "bee", [long]: "x".repeat(1000) };
			const entries = readTar(tarOf(files, format));
			const got = Object.fromEntries(
				entries
					.filter(e => e.type === "file")
					.map(e => [e.name.replace(/^\.\//, ""), new TextDecoder().decode(e.data)]),
			);
			expect(got).toEqual(files);
			expect(entries.some(e => e.type === "dir" && e.name.replace(/^\.\/?/, "").startsWith("a"))).toBe(true);
		});
	}

	test("an archive cut inside an entry throws instead of yielding half a file", () => {
		const tar = tarOf({ "big.bin": "z".repeat(4000) }, "gnu");
		const cut = tar.subarray(0, 512 * 4);
		expect(() => readTar(cut)).toThrow(/cut short/);
	});

	test("the pinned package's library archive holds the NSS libraries the browser is launched with", () => {
		const pkg = dirname(dirname(dirname(require.resolve("@sparticuz/chromium"))));
		const entries = readTar(brotliDecompressSync(readFileSync(join(pkg, "bin", "al2023.tar.br"))));
		const names = entries.map(e => e.name);
		for (const lib of ["lib/libnss3.so", "lib/libnspr4.so", "lib/libsoftokn3.so"]) expect(names).toContain(lib);
	});
});
