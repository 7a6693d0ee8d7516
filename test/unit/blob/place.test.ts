/**
 * Issue 38.2: an upload's own-path check and its write are about one directory object (blob/place.ts).
 * Hostile inputs: `..` inside links, link loops, a directory swapped for a link after the walk (the write
 * still lands in the directory that was checked), hard links, case variants. Second channel: the files.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
	closeSync,
	existsSync,
	linkSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AuditRecord } from "../../../src/audit/record.ts";
import { ownTwin } from "../../../src/blob/own.ts";
import { dirAt, inDir, make, type Place, reach, release } from "../../../src/blob/place.ts";
import { createBlobRoute } from "../../../src/blob/route.ts";
import { commitNew, openStaging } from "../../../src/blob/staging.ts";
import { openTarget } from "../../../src/blob/target.ts";
import { routeCtx } from "../../helpers/route-ctx.ts";
import { waitFor } from "../../helpers/wait.ts";

let dir: string;
let agent: string;
let work: string;
let own: string[];
let config: string;
beforeEach(() => {
	dir = realpathSync(mkdtempSync(join(tmpdir(), "a2a-place-")));
	agent = join(dir, "agent");
	work = join(dir, "work");
	mkdirSync(agent);
	mkdirSync(work);
	config = join(agent, "a2a-bridge.json");
	writeFileSync(config, '{"token":"real"}\n');
	writeFileSync(join(agent, "a2a-bridge.log"), "");
	own = [config, join(agent, "a2a-bridge.log")];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const log: string[] = [];
const placed = (path: string): Place => {
	const r = reach(path, own, l => log.push(l));
	if (!r.ok) throw new Error(`${r.code}: ${r.why}`);
	return r.place;
};
const refusal = (path: string) => {
	const r = reach(path, own, l => log.push(l));
	if (r.ok) release(r.place);
	return r.ok ? null : { code: r.code, message: r.why };
};

describe("reach: the own-path rule asked on each held directory", () => {
	test("`..` inside links is taken after the link, as the kernel does: into the bridge's directory -> own_file", () => {
		mkdirSync(join(agent, "sub"));
		symlinkSync(join(agent, "sub"), join(work, "s"));
		symlinkSync("s/../a2a-bridge.json", join(work, "t"));
		symlinkSync(`/../../..${agent}/sub/../a2a-bridge.log.1`, join(work, "rooted"));
		symlinkSync("s/../missing/../a2a-bridge.json.lock", join(work, "through-missing"));
		for (const p of ["t", "rooted", "through-missing"]) {
			expect([p, refusal(join(work, p))?.code]).toEqual([p, "own_file"]);
		}
		// The same `..` away from the bridge's directory is an ordinary target.
		symlinkSync("s/../sub/notes.txt", join(work, "fine"));
		expect(refusal(join(work, "fine"))).toBeNull();
	});

	test("link loops and long chains end in a clear refusal, never a hang", () => {
		symlinkSync("b", join(work, "a"));
		symlinkSync("a", join(work, "b"));
		symlinkSync("self", join(work, "self"));
		for (const p of ["a", "a/x", "self/y/z"]) {
			expect([p, refusal(join(work, p))]).toEqual([
				p,
				{ code: "write_failed", message: expect.stringContaining("links") },
			]);
		}
	});

	test("a final link is followed and the name it lands on is checked in the directory it lands in", () => {
		symlinkSync(join(agent, "a2a-bridge.log.9"), join(work, "to-generation"));
		symlinkSync("to-generation", join(work, "chain"));
		symlinkSync(join(agent, "A2A-Bridge.JSON.Lock"), join(work, "to-lock"));
		for (const p of ["to-generation", "chain", "to-lock"]) {
			expect([p, refusal(join(work, p))?.code]).toEqual([p, "own_file"]);
		}
		symlinkSync(join(work, "elsewhere.bin"), join(work, "ok-link"));
		const p = placed(join(work, "ok-link"));
		expect([p.target, p.linked, p.name]).toEqual([join(work, "elsewhere.bin"), true, "elsewhere.bin"]);
		release(p);
	});

	test("a final link to a device or a kernel link to a pipe (/dev/stdin's shape) is refused by what it reaches", () => {
		symlinkSync("/dev/null", join(work, "null-link"));
		expect(refusal(join(work, "null-link"))).toMatchObject({ code: "not_regular_file" });
		const pipe = Bun.spawn(["sleep", "5"], { stdin: "pipe" });
		try {
			expect(refusal(`/proc/${pipe.pid}/fd/0`)).toMatchObject({ code: "not_regular_file" });
		} finally {
			pipe.kill();
		}
	});

	test("case variants and names beside an own file, through a linked directory", () => {
		symlinkSync(agent, join(work, "al"));
		for (const name of ["A2A-BRIDGE.JSON", "a2a-bridge.Json.LOCK", "A2a-Bridge.log.7", ".A2A-STAGING-x"]) {
			expect([name, refusal(join(work, "al", name))?.code]).toEqual([name, "own_file"]);
		}
		expect(refusal(join(work, "al", "models.yml"))).toBeNull();
	});

	test("a hard link of an own file: refused at the walk, and when it appears under a checked name before the open", () => {
		linkSync(config, join(work, "twin.json"));
		expect(refusal(join(work, "twin.json"))).toMatchObject({ code: "own_file" });
		writeFileSync(join(work, "plain.json"), "{}");
		const p = placed(join(work, "plain.json"));
		renameSync(join(work, "twin.json"), join(work, "plain.json"));
		const opened = openTarget(inDir(p.dir, p.name), "append", join(work, "plain.json"));
		if (!opened.ok) throw new Error(opened.why);
		expect(ownTwin(p.own, "plain.json", opened.st)).toContain("by another name");
		closeSync(opened.fd);
		release(p);
	});
});

describe("the write acts through the held directory", () => {
	test("the directory swapped for a link to the bridge's directory after the walk: the file lands in the checked one", () => {
		mkdirSync(join(work, "d"));
		const p = placed(join(work, "d", "new", "a2a-bridge.json"));
		expect(p.missing).toEqual(["new"]);
		// The race: the checked directory moves away and a link to the bridge's directory takes its name.
		renameSync(join(work, "d"), join(work, "d-old"));
		symlinkSync(agent, join(work, "d"));
		make(p);
		const staged = openStaging(p.target, null, dirAt(p.dir));
		if (!staged.ok) throw new Error(staged.why);
		writeFileSync(staged.value.fd, '{"token":"forged"}\n');
		expect(commitNew(staged.value, inDir(p.dir, p.name))).toBe(true);
		closeSync(staged.value.fd);
		release(p);
		expect(readFileSync(config, "utf8")).toBe('{"token":"real"}\n');
		expect(readdirSync(agent).sort()).toEqual(["a2a-bridge.json", "a2a-bridge.log"]);
		expect(readFileSync(join(work, "d-old", "new", "a2a-bridge.json"), "utf8")).toBe('{"token":"forged"}\n');
	});

	test("a PUT through the route whose directory is swapped mid-body replaces the file in the directory it checked", async () => {
		const audits: AuditRecord[] = [];
		const route = createBlobRoute({
			home: () => dir,
			cwd: () => work,
			audit: r => audits.push(r),
			log: () => {},
			config: () => ({ blob: "write" }),
			ownFiles: () => own,
		});
		mkdirSync(join(work, "d"));
		writeFileSync(join(work, "d", "a2a-bridge.json"), "decoy\n");
		let push: ReadableStreamDefaultController<Uint8Array> | undefined;
		const body = new ReadableStream<Uint8Array>({
			start: c => {
				push = c;
			},
		});
		const req = new Request(`http://127.0.0.1:9/blob?path=${encodeURIComponent("d/a2a-bridge.json")}`, {
			method: "PUT",
			body,
		});
		const reply = route.handle(req, routeCtx({ sid: "sid-1" }));
		push?.enqueue(new TextEncoder().encode('{"token":'));
		await waitFor("the staging file", () => readdirSync(join(work, "d")).some(n => n.startsWith(".a2a-staging-")));
		renameSync(join(work, "d"), join(work, "d-old"));
		symlinkSync(agent, join(work, "d"));
		push?.enqueue(new TextEncoder().encode('"forged"}\n'));
		push?.close();
		const res = await reply;
		expect(res.status).toBe(200);
		expect(readFileSync(config, "utf8")).toBe('{"token":"real"}\n');
		expect(readdirSync(agent).sort()).toEqual(["a2a-bridge.json", "a2a-bridge.log"]);
		expect(readFileSync(join(work, "d-old", "a2a-bridge.json"), "utf8")).toBe('{"token":"forged"}\n');
		expect(existsSync(join(agent, "a2a-bridge.json.1"))).toBe(false);
		expect(audits.at(-1)).toMatchObject({ tool: "blob:write", isError: false });
	});
});
