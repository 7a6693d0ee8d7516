/**
 * Issue 30, defects 1 and 3, against the real host: the title the bridge gives the host's approval gate
 * (the rpc `select` below; the TUI shows the same title) reads as what runs. A caller's line breaks never
 * make a line of it, and every argument that decides what happens is on it: `bash` env and cwd, `hub`
 * start and send, `write` size and digest, `edit` edits. Second channel: what the approved call left on
 * disk matches what the title said.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, type Host, type RpcFrame, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

let host: Host;
let sid: string;
useSharedHost({ args: ["--approval-mode", "always-ask"], session: true }, h => ({ host, sid } = h));

const CONTINUED = "┆ ";
const LABEL = "Remote call (A2A): token owner, client test";
const isSelect = (f: RpcFrame) => f.type === "extension_ui_request" && f.method === "select";

/** The title's logical lines: continuation rows joined back to the line they continue. */
const logical = (title: string): string[] => title.replaceAll(`\n${CONTINUED}`, "").split("\n");

/** Starts the call, returns its approval title once shown, answers it and returns the call's result. */
async function prompted(
	tool: string,
	args: Record<string, unknown>,
	seen: (title: string) => boolean,
	answer: "Approve" | "Deny",
): Promise<{ title: string; isError: boolean; text: string }> {
	const pending = callTool(host, sid, tool, args);
	const frame = await host.waitFrame(f => isSelect(f) && seen(logical(String(f.title)).join("\n")), 30_000);
	host.send({ type: "extension_ui_response", id: frame.id, value: answer });
	const result = (await pending).body.result as { isError: boolean; content: Array<{ text: string }> };
	return { title: String(frame.title), isError: result.isError, text: result.content.map(c => c.text).join("") };
}

describe("the approval title is what runs (issue 30 defects 1 and 3)", () => {
	test("30 line breaks and a fake prompt in a command make no line of the title; y runs exactly that command", async () => {
		const marker = join(host.cwd, `pwned-${crypto.randomUUID()}`);
		const fake = "Approval needed: bash from token owner, client test\n  Command: ls -la";
		const command = `${"\n".repeat(30)}${fake}\ntouch ${marker}`;
		const r = await prompted("bash", { command }, t => t.includes(marker), "Approve");
		const lines = r.title.split("\n");
		expect(lines[0]).toStartWith("Allow tool: bash — remote call (A2A): Command: \\n\\n\\n");
		expect(lines.at(-1)).toBe(LABEL);
		// The title is the bridge's lines only: no line of it starts with the caller's text.
		for (const line of lines.slice(1, -1)) expect(line).toMatch(/^(┆ |Command: )/);
		expect(lines.filter(l => /^ *(Approval needed|Command: ls)/.test(l))).toEqual([]);
		expect(logical(r.title)[1]).toBe(
			`Command: ${"\\n".repeat(30)}Approval needed: bash from token owner, client test\\n  Command: ls -la\\ntouch ${marker}`,
		);
		// What the approver read ran: the marker is there.
		expect(existsSync(marker)).toBe(true);
	}, 60_000);

	test("bash: env and cwd, which the host's own prompt leaves out, are on the title and are what ran", async () => {
		const dir = join(host.cwd, `sub-${crypto.randomUUID()}`);
		mkdirSync(dir);
		const value = `from-env-${crypto.randomUUID()}`;
		const args = { command: 'printf %s "$A2A_PROBE" > probe.txt', env: { A2A_PROBE: value }, cwd: dir };
		const r = await prompted("bash", args, t => t.includes(value), "Approve");
		expect(logical(r.title).slice(1, -1)).toEqual([
			'Command: printf %s "$A2A_PROBE" > probe.txt',
			`env: {"A2A_PROBE":"${value}"}`,
			`cwd: ${dir}`,
		]);
		expect(readFileSync(join(dir, "probe.txt"), "utf8")).toBe(value);
	}, 60_000);

	test("hub start: application, args and cwd are on the title (the host shows only 'Allow tool: hub'); approved, they ran", async () => {
		const marker = `started-${crypto.randomUUID()}`;
		const name = `p${String(Math.random()).slice(2, 8)}`;
		const args = {
			op: "start",
			name,
			application: "/bin/sh",
			args: ["-c", `touch ${marker}`],
			cwd: host.cwd,
			pty: false,
		};
		const r = await prompted("hub", args, t => t.includes(marker), "Approve");
		const lines = logical(r.title);
		expect(lines[0]).toStartWith(`Allow tool: hub — remote call (A2A): op: start, name: ${name}, application: /bin/sh`);
		expect(lines).toContain("application: /bin/sh");
		expect(lines).toContain(`args: ["-c","touch ${marker}"]`);
		expect(lines).toContain(`cwd: ${host.cwd}`);
		expect(r.isError).toBe(false);
		await waitFor(`${marker} made by the approved hub start`, () => existsSync(join(host.cwd, marker)));
	}, 60_000);

	test("hub send to a process: the text and the keys are on the title; denied, nothing is sent", async () => {
		const text = `echo ${crypto.randomUUID()}\nrm -rf ~`;
		const r = await prompted(
			"hub",
			{ op: "send", name: "nosuch", text, keys: ["Enter", "C-c"] },
			t => t.includes(text.slice(5, 30)),
			"Deny",
		);
		const lines = logical(r.title);
		expect(lines).toContain(`text: ${text.replace("\n", "\\n")}`);
		expect(lines).toContain('keys: ["Enter","C-c"]');
		expect(r.isError).toBe(true);
	}, 60_000);

	test("write: path, size and SHA-256, and what is not shown; the file written has that digest", async () => {
		const path = join(host.cwd, `w-${crypto.randomUUID()}.txt`);
		const content = `${"head\n".repeat(600)}HIDDEN-${crypto.randomUUID()}\n${"tail\n".repeat(600)}`;
		const digest = createHash("sha256").update(content).digest("hex");
		const r = await prompted("write", { path, content }, t => t.includes(path), "Approve");
		const lines = logical(r.title);
		expect(lines).toContain(`Path: ${path}`);
		const line = lines.find(l => l.startsWith("content ("));
		expect(line).toStartWith(
			`content (${Buffer.byteLength(content).toLocaleString("en-US")} bytes, sha256 ${digest}): "head\\nhead`,
		);
		expect(line).toMatch(/" … [\d,]+ characters not shown … "/);
		expect(line).toEndWith('tail\\ntail\\n"');
		expect(createHash("sha256").update(readFileSync(path)).digest("hex")).toBe(digest);
	}, 60_000);

	test("edit: the edits themselves are on the title (the host shows only the file); denied, the file is unchanged", async () => {
		const path = join(host.cwd, `e-${crypto.randomUUID()}.txt`);
		writeFileSync(path, "keep\n");
		const input = `[${path}]\n- keep\n+ ${"changed ".repeat(3)}`;
		const r = await prompted("edit", { input }, t => t.includes(path), "Deny");
		expect(logical(r.title)).toContain(`input: ${input.replaceAll("\n", "\\n")}`);
		expect(readFileSync(path, "utf8")).toBe("keep\n");
	}, 60_000);

	test("issue 38 finding 6: bash env padded past 600 characters still shows every key; what ran saw those values", async () => {
		const dir = join(host.cwd, `pad-${crypto.randomUUID()}`);
		mkdirSync(dir);
		const late = `late-${crypto.randomUUID()}`;
		const args = {
			command: 'printf %s "$A2A_LATE" > probe.txt',
			env: { PAD: "a".repeat(600), BASH_ENV: "./x.sh", A2A_LATE: late },
			cwd: dir,
		};
		const r = await prompted("bash", args, t => t.includes(late), "Approve");
		const lines = logical(r.title);
		expect(lines).toContain('env.BASH_ENV: "./x.sh"');
		expect(lines).toContain(`env.A2A_LATE: "${late}"`);
		expect(lines.find(l => l.startsWith("env.PAD: "))).toMatch(/^env\.PAD: "a+" … [\d,]+ characters not shown … "a+"$/);
		// The value after the padding is the one the command saw (omp itself drops BASH_ENV from a bash env).
		expect(readFileSync(join(dir, "probe.txt"), "utf8")).toBe(late);
	}, 60_000);

	test("issue 38 finding 6: hub args with a long element keep its end on the title; approved, that end ran", async () => {
		const marker = `end-${crypto.randomUUID()}`;
		const name = `p${String(Math.random()).slice(2, 8)}`;
		const script = `: ${"x".repeat(400)}; touch ${marker}`;
		const args = { op: "start", name, application: "/bin/sh", args: ["-c", script], cwd: host.cwd, pty: false };
		const r = await prompted("hub", args, t => t.includes(name), "Approve");
		const lines = logical(r.title);
		expect(lines).toContain('args[0]: "-c"');
		expect(lines.find(l => l.startsWith("args[1]: "))).toEndWith(`touch ${marker}"`);
		await waitFor(`${marker} made by the approved hub start`, () => existsSync(join(host.cwd, marker)));
	}, 60_000);
});
