import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";
import { boxTag, machineIdFile, readBoxTag } from "../../../src/host/box-tag.ts";

const ID = "3d1219c7c4c5404aaa1f6d2a48adfda4";
const dir = mkdtempSync(join(tmpdir(), "a2a-box-tag-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
	const path = join(dir, name);
	writeFileSync(path, text);
	return path;
};

describe("boxTag: an app-specific hash of the machine id", () => {
	test("-> the first 6 hex digits of HMAC-SHA256(key: the id, text: pi-a2a-ext), as openssl computes it", () => {
		// Second channel: the rule the docs give a user, run by openssl, not by the module's own crypto.
		const r = spawnSync(["openssl", "dgst", "-sha256", "-hmac", ID], { stdin: Buffer.from("pi-a2a-ext") });
		const hex = /([0-9a-f]{64})/.exec(r.stdout.toString())?.[1] ?? "";
		expect(hex).toHaveLength(64);
		expect(boxTag(ID)).toBe(hex.slice(0, 6));
		expect(boxTag(`${ID.toUpperCase()}\n`)).toBe(hex.slice(0, 6));
		expect(boxTag(ID)).not.toBe(ID.slice(0, 6));
	});

	test("hostile or missing ids -> no tag", () => {
		for (const text of [
			undefined,
			"",
			"\n",
			"uninitialized\n",
			"0".repeat(32),
			ID.slice(0, 31),
			`${ID}0`,
			`${ID}\n${ID}\n`,
			ID.replace("a", "g"),
			`${ID.slice(0, 16)}-${ID.slice(16)}`,
			"\u0000".repeat(32),
		]) {
			expect({ text, tag: boxTag(text) }).toEqual({ text, tag: undefined });
		}
	});
});

describe("readBoxTag: the tag of the id in a file, never a hang", () => {
	test("a machine-id file (trailing newline) -> its tag; two ids -> two tags", () => {
		const a = readBoxTag(file("a", `${ID}\n`));
		const b = readBoxTag(file("b", "0123456789abcdef0123456789abcdef\n"));
		expect(a).toBe(boxTag(ID) as string);
		expect(b).toMatch(/^[0-9a-f]{6}$/);
		expect(a).not.toBe(b as string);
	});

	test("missing, empty, a directory, a FIFO, /dev/zero, a huge file, a dangling link -> no tag, at once", () => {
		mkdirSync(join(dir, "d"));
		spawnSync(["mkfifo", join(dir, "fifo")]);
		symlinkSync(join(dir, "nowhere"), join(dir, "dangling"));
		const started = Date.now();
		for (const path of [
			join(dir, "missing"),
			file("empty", ""),
			join(dir, "d"),
			join(dir, "fifo"),
			"/dev/zero",
			file("huge", `${ID}\n${" ".repeat(1 << 20)}`),
			file("padded", `${ID}${" ".repeat(40)}`),
			join(dir, "dangling"),
		]) {
			expect({ path, tag: readBoxTag(path) }).toEqual({ path, tag: undefined });
		}
		expect(Date.now() - started).toBeLessThan(1000);
	});
});

describe("machineIdFile", () => {
	test("-> /etc/machine-id unless the tests name another file; an empty value is no value", () => {
		expect(machineIdFile({})).toBe("/etc/machine-id");
		expect(machineIdFile({ A2A_BRIDGE_MACHINE_ID_FILE: "" })).toBe("/etc/machine-id");
		expect(machineIdFile({ A2A_BRIDGE_MACHINE_ID_FILE: "/tmp/x/machine-id" })).toBe("/tmp/x/machine-id");
	});
});
