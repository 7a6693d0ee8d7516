/** Which omp the headless host starts: the checkout's pinned one, else the omp on PATH (an installed plugin). */
import { describe, expect, test } from "bun:test";
import { findOmpCli, OMP_PACKAGE } from "../../../src/headless/omp-cli.ts";

const pkg = (version: string, name = OMP_PACKAGE) => JSON.stringify({ name, version });

function lookup(files: Record<string, string>, onPath?: string) {
	return { readPackage: (p: string) => files[p], whichOmp: () => onPath };
}

describe("findOmpCli", () => {
	test("a checkout: the pinned dev dependency, run by Bun, even with another omp on PATH", () => {
		const found = findOmpCli(
			"/co",
			"/bun",
			lookup(
				{
					"/co/node_modules/@oh-my-pi/pi-coding-agent/package.json": pkg("18.2.3"),
					"/g/lib/package.json": pkg("9.9.9"),
				},
				"/g/lib/dist/cli.js",
			),
		);
		expect(found).toEqual({
			kind: "found",
			command: ["/bun", "--no-install", "/co/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"],
			version: "18.2.3",
			from: "checkout",
		});
	});

	test("an installed plugin (no node_modules): the omp on PATH, its version from its package", () => {
		const found = findOmpCli(
			"/home/u/.omp/plugins/node_modules/pi-a2a-ext",
			"/bun",
			lookup(
				{ "/usr/lib/node_modules/@oh-my-pi/pi-coding-agent/package.json": pkg("18.1.16") },
				"/usr/lib/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js",
			),
		);
		expect(found).toEqual({
			kind: "found",
			command: ["/bun", "--no-install", "/usr/lib/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"],
			version: "18.1.16",
			from: "PATH",
		});
	});

	test("a package.json of another name is not omp's: a compiled omp on PATH is run as it is", () => {
		const found = findOmpCli(
			"/p",
			"/bun",
			lookup(
				{
					"/p/node_modules/@oh-my-pi/pi-coding-agent/package.json": pkg("1.0.0", "impostor"),
					"/opt/package.json": "{",
				},
				"/opt/bin/omp",
			),
		);
		expect(found).toEqual({ kind: "found", command: ["/opt/bin/omp"], version: "?", from: "PATH" });
	});

	test("neither: one sentence naming both places", () => {
		const found = findOmpCli("/p", "/bun", lookup({}));
		expect(found.kind).toBe("missing");
		expect(found.kind === "missing" && found.message).toBe(
			"no omp to start: neither /p/node_modules/@oh-my-pi/pi-coding-agent (run npm install in /p) nor an omp on PATH",
		);
	});
});
