/**
 * The docs site test's browser: the headless Chromium that the pinned dev dependency `@sparticuz/chromium` ships
 * inside its registry tarball (brotli-compressed), so `npm install` brings it and nothing is fetched at test time.
 * It is inflated once per version into .tmp/chromium/<version>/ together with the NSS libraries and the font it
 * ships, and launched with those, so neither a system browser nor the system's NSS is used. Linux x64 only: the
 * package ships no other build.
 */
import {
	createReadStream,
	createWriteStream,
	existsSync,
	mkdirSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { brotliDecompressSync, createBrotliDecompress } from "node:zlib";
import { ROOT } from "./host.ts";

const CHROMIUM_PACKAGE = "@sparticuz/chromium";

export interface PackagedChromium {
	/** The inflated executable, under .tmp/chromium/<version>/. */
	path: string;
	/** The package version (the one package.json pins). */
	version: string;
	/** What the browser process needs in its environment: the shipped NSS libraries and font configuration. */
	env: Record<string, string>;
}

/** One entry of a tar archive: a regular file, a directory or a symlink (nothing else occurs in the package). */
interface TarEntry {
	name: string;
	type: "file" | "dir" | "symlink";
	data: Uint8Array;
	link: string;
	mode: number;
}

const field = (block: Uint8Array, from: number, length: number): string => {
	const raw = new TextDecoder().decode(block.subarray(from, from + length));
	const nul = raw.indexOf("\0");
	return nul < 0 ? raw : raw.slice(0, nul);
};

/**
 * The entries of a ustar/GNU tar archive (pax and GNU long-name headers applied). Pure; throws on a truncated or
 * unknown entry rather than skipping it, so a changed package fails loudly.
 */
export function readTar(tar: Uint8Array): TarEntry[] {
	const out: TarEntry[] = [];
	let at = 0;
	let longName: string | undefined;
	while (at + 512 <= tar.length) {
		const head = tar.subarray(at, at + 512);
		if (head.every(b => b === 0)) break;
		const size = Number.parseInt(field(head, 124, 12).trim() || "0", 8);
		const flag = field(head, 156, 1) || "0";
		const prefix = field(head, 345, 155);
		const body = tar.subarray(at + 512, at + 512 + size);
		if (body.length < size) throw new Error(`tar: entry at ${at} is cut short`);
		at += 512 + Math.ceil(size / 512) * 512;
		if (flag === "L") {
			longName = field(body, 0, body.length);
			continue;
		}
		if (flag === "x") {
			longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(body))?.[1] ?? longName;
			continue;
		}
		if (flag === "g") continue;
		const name = longName ?? (prefix ? `${prefix}/${field(head, 0, 100)}` : field(head, 0, 100));
		longName = undefined;
		const type = flag === "0" || flag === "7" ? "file" : flag === "5" ? "dir" : flag === "2" ? "symlink" : undefined;
		if (!type) throw new Error(`tar: ${name}: entry type '${flag}' not handled`);
		out.push({ name, type, data: body, link: field(head, 157, 100), mode: Number.parseInt(field(head, 100, 8), 8) });
	}
	return out;
}

/** Writes `entries` under `dir`, refusing any name that would land outside it. */
function writeTar(entries: TarEntry[], dir: string): void {
	for (const e of entries) {
		const target = resolve(dir, e.name);
		if (target !== dir && !target.startsWith(`${dir}/`)) throw new Error(`tar: ${e.name} leaves ${dir}`);
		if (e.type === "dir") mkdirSync(target, { recursive: true });
		else if (e.type === "symlink") throw new Error(`tar: ${e.name}: symlinks are not expected here`);
		else {
			mkdirSync(dirname(target), { recursive: true });
			writeFileSync(target, e.data, { mode: e.mode & 0o777 });
		}
	}
}

/** The package's own directory, as `npm install` laid it out. */
function packageDir(): string {
	const main = require.resolve("@sparticuz/chromium");
	let dir = dirname(main);
	while (!existsSync(join(dir, "package.json")) || !dir.endsWith(join("@sparticuz", "chromium"))) {
		const up = dirname(dir);
		if (up === dir) throw new Error(`${CHROMIUM_PACKAGE}: no package directory above ${main}`);
		dir = up;
	}
	return dir;
}

/**
 * The packaged browser, inflated on first use (a few seconds) into a fresh directory renamed into place whole, so
 * a run cut short leaves nothing half-written to be reused.
 */
export async function packagedChromium(): Promise<PackagedChromium> {
	if (process.platform !== "linux" || process.arch !== "x64") {
		throw new Error(`${CHROMIUM_PACKAGE} ships a Linux x64 browser only; this is ${process.platform} ${process.arch}`);
	}
	const pkg = packageDir();
	const version = (JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string }).version;
	const dir = join(ROOT, ".tmp", "chromium", version);
	const path = join(dir, "chromium");
	if (!existsSync(path)) {
		const temp = `${dir}.${process.pid}.partial`;
		rmSync(temp, { recursive: true, force: true });
		mkdirSync(temp, { recursive: true });
		const bin = join(pkg, "bin");
		await pipeline(
			createReadStream(join(bin, "chromium.br")),
			createBrotliDecompress(),
			createWriteStream(join(temp, "chromium"), { mode: 0o755 }),
		);
		// al2023.tar.br holds lib/ (NSS, NSPR, expat), fonts.tar.br holds fonts/ (Open Sans).
		for (const archive of ["al2023.tar.br", "fonts.tar.br"]) {
			writeTar(readTar(brotliDecompressSync(readFileSync(join(bin, archive)))), temp);
		}
		writeFileSync(
			join(temp, "fonts.conf"),
			`<?xml version="1.0"?>\n<fontconfig>\n  <dir>${join(dir, "fonts")}</dir>\n  <cachedir>${join(dir, "fonts-cache")}</cachedir>\n</fontconfig>\n`,
		);
		rmSync(dir, { recursive: true, force: true });
		renameSync(temp, dir);
	}
	return { path, version, env: { LD_LIBRARY_PATH: join(dir, "lib"), FONTCONFIG_FILE: join(dir, "fonts.conf") } };
}
