/**
 * Which omp the headless host starts. In a checkout it is the pinned dev dependency (`npm run host`); in an
 * installed plugin (`omp install <git URL>` or `<dir>`, which brings no dependencies) it is the `omp` on PATH,
 * the one that installed it. Pure: the file-system look-ups are passed in.
 */
import { dirname, join } from "node:path";

/** @internal */
export const OMP_PACKAGE = "@oh-my-pi/pi-coding-agent";

export interface OmpLookup {
	/** The package.json text at `path`, or undefined when there is none. */
	readPackage(path: string): string | undefined;
	/** `omp` on PATH, symlinks resolved, or undefined. */
	whichOmp(): string | undefined;
}

export type OmpCli =
	| { kind: "found"; command: string[]; version: string; from: "checkout" | "PATH" }
	| { kind: "missing"; message: string };

const versionOf = (text: string | undefined): string | undefined => {
	try {
		const pkg = JSON.parse(text ?? "") as { name?: unknown; version?: unknown };
		return pkg.name === OMP_PACKAGE && typeof pkg.version === "string" ? pkg.version : undefined;
	} catch {
		return undefined;
	}
};

/**
 * `root` is the bridge package's directory; `bun` runs omp's JavaScript CLI (`--no-install`: a mistaken import
 * must never make Bun fetch packages while serving). An `omp` on PATH that is not omp's package (a compiled
 * binary) is run as it is.
 */
export function findOmpCli(root: string, bun: string, look: OmpLookup): OmpCli {
	const pinned = join(root, "node_modules", ...OMP_PACKAGE.split("/"));
	const pinnedVersion = versionOf(look.readPackage(join(pinned, "package.json")));
	if (pinnedVersion) {
		return {
			kind: "found",
			command: [bun, "--no-install", join(pinned, "dist", "cli.js")],
			version: pinnedVersion,
			from: "checkout",
		};
	}
	const onPath = look.whichOmp();
	if (!onPath) {
		return {
			kind: "missing",
			message: `no omp to start: neither ${pinned} (run npm install in ${root}) nor an omp on PATH`,
		};
	}
	// dist/cli.js -> the package two levels up; a compiled binary has no such package.
	const version = versionOf(look.readPackage(join(dirname(dirname(onPath)), "package.json")));
	return version
		? { kind: "found", command: [bun, "--no-install", onPath], version, from: "PATH" }
		: { kind: "found", command: [onPath], version: "?", from: "PATH" };
}
