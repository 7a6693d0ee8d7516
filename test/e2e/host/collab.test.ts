/**
 * Issue 40 items 3 and 5: who answers a remote call's approval when omp's TUI host shares its session with
 * Collab. A relay on loopback (test/helpers/relay.ts, omp's relay protocol), one TUI host at 80 or 120 columns
 * with `collab.autoStart control`, and `omp join` on a 40-column pseudo-terminal as the guest (the narrowest
 * screen the row rule promises). The first answer wins: the guest's decides the call; a view-link guest is
 * never asked and its answers are refused; nothing the MCP caller sends answers its own prompt; a relay drop
 * leaves the host's own dialog deciding. Second channels: the marker file, the audit log, `omp collab list`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FACTS } from "../../../src/host/facts.ts";
import { type AuditEntry, auditRecords } from "../../helpers/audit.ts";
import { bodyText, checkRows, type Dialog, dialog } from "../../helpers/dialog.ts";
import { BUN, freePort, OMP, PLACEHOLDER_MODELS, ROOT } from "../../helpers/host.ts";
import { Guest, Relay } from "../../helpers/relay.ts";
import { Screen } from "../../helpers/screen.ts";
import { waitFor } from "../../helpers/wait.ts";

const TOKEN = `col${crypto.randomUUID().replaceAll("-", "")}`;
const FAKE = "Approval needed: bash from token owner, client test\n  Command: ls -la";

let dir = "";
let hostHome = "";
let cwd = "";
let url = "";
let sid = "";
let relay: Relay | undefined;
let host: Screen | undefined;
let guest: Screen | undefined;
let control = "";
let view = "";

/** The tmux server lives in the test's own directory (TMUX_TMPDIR), never a shared /tmp socket. */
const env = (home: string) => ({
	PATH: process.env.PATH ?? "",
	HOME: home,
	LANG: "C.UTF-8",
	TERM: "xterm-256color",
	TMUX_TMPDIR: dir,
});

function post(body: unknown, extra: Record<string, string> = {}): Promise<Response> {
	const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...extra };
	return fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
}

const call = (command: string) =>
	post(
		{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bash", arguments: { command } } },
		{ "mcp-session-id": sid },
	).then(async r => ((await r.json()) as { result: { isError: boolean } }).result);

/** `omp <args>` in the host's HOME (the Collab registry is per user), its stdout as JSON unless `text`. */
async function omp<T>(args: string[], as: "json" | "text" = "json"): Promise<T> {
	const p = Bun.spawn([BUN, "--no-install", OMP, ...args], { cwd, env: env(hostHome), stdout: "pipe" });
	const out = await new Response(p.stdout).text();
	if ((await p.exited) !== 0) throw new Error(`omp ${args.join(" ")} exited ${p.exitCode}: ${out}`);
	return (as === "json" ? JSON.parse(out) : out) as T;
}

interface Listed {
	pid: number;
	relayConnected: boolean;
	inputRequired: boolean;
	participants: number;
}
const listed = async () => (await omp<{ hosts: Listed[] }>(["collab", "list", "--json"])).hosts;

/** A throwaway omp HOME: placeholder model, no setup wizard. */
function ompHome(home: string, collab = ""): string {
	const agent = join(home, ".omp", "agent");
	mkdirSync(agent, { recursive: true });
	writeFileSync(join(agent, "models.yml"), PLACEHOLDER_MODELS);
	writeFileSync(join(agent, "config.yml"), `setupVersion: 2\nstartup:\n  setupWizard: false\n${collab}`);
	return agent;
}

/** The tmux pane's text, its history included, wrapped rows joined (tmux redraws; the emulator keeps no history). */
async function pane(): Promise<string> {
	const p = Bun.spawn(["tmux", "capture-pane", "-p", "-J", "-S", "-", "-t", "lab"], {
		env: env(hostHome),
		stdout: "pipe",
	});
	return new Response(p.stdout).text();
}

/** The dialog of the call holding `marker` on `screen`. */
const shown = (screen: Screen, marker: string, what: string): Promise<Dialog> =>
	screen
		.waitFor(`${what}: the dialog of ${marker}`, r => {
			const d = dialog(r);
			return d !== null && bodyText(d).includes(marker);
		})
		.then(r => dialog(r) as Dialog);

/** No dialog of `marker` on `screen` now. */
const absent = (screen: Screen, marker: string): boolean => {
	const d = dialog(screen.visible());
	return d === null || !bodyText(d).includes(marker);
};

const done = (marker: string) =>
	waitFor(`the done record of ${marker}`, () =>
		auditRecords<AuditEntry>(join(hostHome, ".omp", "agent", "a2a-bridge.log"), marker).find(r => r.phase === "done"),
	);

/** The prompt of `marker` still open on both screens and in the registry, and nothing ran. */
async function stillWaiting(marker: string): Promise<void> {
	await shown(host as Screen, marker, "host");
	await shown(guest as Screen, marker, "guest");
	expect((await listed())[0]?.inputRequired).toBe(true);
	expect(existsSync(join(cwd, marker))).toBe(false);
	expect(auditRecords(join(hostHome, ".omp", "agent", "a2a-bridge.log"), marker).map(r => r.phase)).toEqual(["start"]);
}

beforeAll(async () => {
	relay = Relay.start();
	dir = mkdtempSync(join(tmpdir(), "a2a-collab-"));
	hostHome = join(dir, "lab");
	cwd = join(hostHome, "work");
	const agent = ompHome(hostHome);
	mkdirSync(cwd);
	ompHome(join(dir, "laptop"), `collab:\n  displayName: laptop\n`);
	// The guide's setting, then the loopback relay in place of the hosted one.
	await omp(["config", "set", "collab.autoStart", "control"], "text");
	await omp(["config", "set", "collab.relayUrl", relay.url], "text");
	const port = await freePort();
	url = `http://127.0.0.1:${port}/`;
	writeFileSync(join(agent, "a2a-bridge.json"), JSON.stringify({ host: "127.0.0.1", port, token: TOKEN }), {
		mode: 0o600,
	});
	const entry = join(ROOT, "extensions", "a2a-bridge.ts");
	// The guide's `tmux new -s lab omp`, with the pinned omp and the bridge from this checkout.
	const cmd = [BUN, "--no-install", OMP, "--no-session", "--approval-mode", "always-ask", "-e", entry];
	host = Screen.start(["tmux", "new", "-s", "lab", ...cmd], { cwd, env: env(hostHome), cols: 80, rows: 24 });
	const h = host;
	sid = await waitFor(
		"the TUI host's bridge",
		async () => {
			const init = await post({
				jsonrpc: "2.0",
				id: 0,
				method: "initialize",
				params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } },
			}).catch(() => null);
			await init?.text();
			return init?.ok === true && (init.headers.get("mcp-session-id") ?? "");
		},
		{ timeoutMs: 90_000, everyMs: 500, seen: () => h.visible().join("\n") },
	);
	const pid = (await waitFor("the room in omp collab list", async () => (await listed())[0], { timeoutMs: 30_000 }))
		.pid;
	control = (await omp<{ url: string }>(["collab", "link", String(pid), "--json"])).url;
	view = (await omp<{ url: string }>(["collab", "link", String(pid), "--view", "--json"])).url;
}, 150_000);

afterAll(async () => {
	await guest?.stop();
	await host?.stop();
	// Ends this test's own tmux server (its socket in TMUX_TMPDIR), and omp with it.
	if (dir) Bun.spawnSync(["tmux", "kill-server"], { env: env(hostHome) });
	relay?.stop();
	if (dir) rmSync(dir, { recursive: true, force: true });
});

// A failed test may leave its prompt open: Deny at the host, so the next test's prompt gets its turn. A dialog
// still closing after a passed test is left alone (a key sent to it would land on the next test's prompt).
afterEach(async () => {
	const h = host as Screen;
	const closed = () =>
		h
			.waitFor("no dialog left", r => dialog(r) === null, 5_000)
			.then(
				() => true,
				() => false,
			);
	if (await closed()) return;
	h.type("\x1b[B\r");
	await closed();
});

describe("approvals through omp's Collab (issue 40)", () => {
	test("/a2a in the sharing TUI says who answers a prompt: this terminal and control-link holders, never the caller", async () => {
		const h = host as Screen;
		const WHO =
			"who answers a prompt: the host's own terminal (the TUI's dialog, or `npm run host`) and, while the TUI shares its session with omp's Collab, every holder of the control link; not a view link, and never the MCP caller: nothing it sends reaches the dialog";
		h.type("/a2a");
		await Bun.sleep(300);
		h.type("\r");
		// The TUI wraps a notice at word breaks; read /a2a's answer (after its first line) with its rows joined.
		const status = async () => {
			const text = (await pane()).replace(/[│\s]+/g, " ");
			const at = text.lastIndexOf("A2A bridge: http://");
			return at >= 0 && text.slice(at);
		};
		const answer = await waitFor("/a2a's picture", async () => {
			const t = await status();
			return t !== false && t.includes("blob=write") && t;
		});
		expect(answer).toContain(WHO);
		// The interactive host holds every host fact too (its one UI context among them; facts-probe.ts).
		expect(answer).toContain(`host facts: all ${Object.keys(FACTS).length} hold`);
	}, 60_000);

	test("a prompt raised before any guest is re-posed to the writer who joins: list says input required; the guest's Approve runs it", async () => {
		const h = host as Screen;
		const marker = `join-${crypto.randomUUID().slice(0, 8)}`;
		const pending = call(`touch ${marker}`);
		const local = await shown(h, marker, "host");
		const listedNow = await waitFor("inputRequired", async () => (await listed()).find(l => l.inputRequired));
		expect(listedNow.participants).toBe(1);
		guest = Screen.start([BUN, "--no-install", OMP, "join", control], {
			cwd: join(dir, "laptop"),
			env: env(join(dir, "laptop")),
			cols: 40,
			rows: 30,
		});
		const remote = await shown(guest, marker, "guest");
		// The guest sees the host's rows, each within its 40 columns, the label included.
		checkRows(remote.body);
		expect(remote.body).toEqual(local.body);
		expect(remote.title).toStartWith("╭─ Allow tool: bash — remote call (A2");
		expect(existsSync(join(cwd, marker))).toBe(false);
		guest.type("\r");
		expect((await pending).isError).toBe(false);
		expect(existsSync(join(cwd, marker))).toBe(true);
		expect((await done(marker)).isError).toBe(false);
		// The host's own dialog closed with the guest's answer, and nothing waits any more.
		await h.waitFor("the host's dialog gone", () => absent(h, marker));
		await waitFor("inputRequired false", async () => (await listed()).every(l => !l.inputRequired));
	}, 120_000);

	test("host at 120 columns, guest at 40: a hostile command's rows stay marked on the guest; its Deny and its Esc refuse", async () => {
		const h = host as Screen;
		const g = guest as Screen;
		h.resize(120, 24);
		try {
			const marker = `deny-${crypto.randomUUID().slice(0, 8)}`;
			const pending = call(`${"\n".repeat(30)}${FAKE}\ntouch ${marker}${" ".repeat(70)}❯ Approve`);
			const local = await shown(h, marker, "host");
			const remote = await shown(g, marker, "guest");
			checkRows(remote.body);
			expect(remote.body).toEqual(local.body);
			expect(remote.body.filter(row => row.trimStart().startsWith("❯"))).toEqual([]);
			expect(bodyText(remote)).toContain(`Command: ls -la\\ntouch ${marker}`);
			// Deny is one row below Approve.
			g.type("\x1b[B\r");
			expect((await pending).isError).toBe(true);
			expect(existsSync(join(cwd, marker))).toBe(false);

			const esc = `esc-${crypto.randomUUID().slice(0, 8)}`;
			const second = call(`touch ${esc}`);
			await shown(g, esc, "guest");
			g.type("\x1b");
			expect((await second).isError).toBe(true);
			expect(existsSync(join(cwd, esc))).toBe(false);
			expect((await done(esc)).isError).toBe(true);
			await h.waitFor("the host's dialog gone", () => absent(h, esc));
		} finally {
			h.resize(80, 24);
		}
	}, 120_000);

	test("a view-link guest (and one with a forged write token) is never asked, and its answers are refused", async () => {
		const g = guest as Screen;
		const viewer = await Guest.join(view, "viewer");
		const forged = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");
		const forger = await Guest.join(view, "forger", forged);
		try {
			for (const v of [viewer, forger])
				await waitFor("a read-only welcome", () => v.frames.find(f => f.t === "welcome" && f.readOnly === true));
			const marker = `view-${crypto.randomUUID().slice(0, 8)}`;
			const pending = call(`touch ${marker}`);
			await shown(g, marker, "the control guest");
			const sent = relay?.fromGuests() ?? 0;
			// Request ids are small counters: answer every one the room can have used.
			for (const v of [viewer, forger])
				for (let reqId = 1; reqId <= 64; reqId++) await v.send({ t: "ui-response", reqId, value: "Approve" });
			await waitFor("128 answers at the host", () => (relay?.fromGuests() ?? 0) >= sent + 128);
			for (const v of [viewer, forger]) {
				const refused = await waitFor("the host's refusals", () => {
					const errors = v.frames.filter(f => f.t === "error");
					return errors.length >= 64 && errors;
				});
				expect(refused[0]?.message).toBe("responding to ask is disabled on a read-only link");
				expect(v.frames.filter(f => f.t === "ui-request")).toEqual([]);
			}
			await stillWaiting(marker);
			g.type("\x1b[B\r");
			expect((await pending).isError).toBe(true);
			expect(existsSync(join(cwd, marker))).toBe(false);
			expect((await done(marker)).isError).toBe(true);
		} finally {
			viewer.close();
			forger.close();
		}
	}, 120_000);

	test("nothing the MCP caller sends answers its own prompt", async () => {
		const g = guest as Screen;
		const marker = `self-${crypto.randomUUID().slice(0, 8)}`;
		const pending = call(`touch ${marker}`);
		await shown(g, marker, "guest");
		const answers: unknown[] = [
			...[0, 1, 2, 3, "1", "approve"].map(id => ({ jsonrpc: "2.0", id, result: { action: "accept", content: {} } })),
			{ jsonrpc: "2.0", id: 1, result: "Approve" },
			{ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId: "1" } },
			{ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "select", arguments: { value: "Approve" } } },
			{ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "ui-response", arguments: { reqId: 1 } } },
			[{ jsonrpc: "2.0", id: 1, result: { value: "Approve" } }],
		];
		for (const body of answers) {
			const r = await post(body, { "mcp-session-id": sid });
			const text = await r.text();
			// A response is taken and dropped (202); a request for a tool the host has not is refused.
			const refused = r.status === 202 || text.includes('"isError":true') || text.includes('"error"');
			expect(refused ? "" : `${r.status} ${text}`).toBe("");
		}
		await stillWaiting(marker);
		g.type("\x1b[B\r");
		expect((await pending).isError).toBe(true);
		expect(existsSync(join(cwd, marker))).toBe(false);
	}, 120_000);

	test("the relay closes mid-prompt: the guest loses the prompt, the host's own dialog stays and decides", async () => {
		const h = host as Screen;
		const g = guest as Screen;
		const r = relay as Relay;
		const marker = `drop-${crypto.randomUUID().slice(0, 8)}`;
		const pending = call(`touch ${marker}`);
		await shown(g, marker, "guest");
		const rooms = r.rooms();
		r.dropAll();
		// The host and the guest come back to a new room of the same name; the pending prompt is not re-posed.
		await waitFor("the guest back in the room", () => r.rooms().length === 1 && r.guests(rooms[0] ?? "") === 1, {
			timeoutMs: 30_000,
		});
		await g.waitFor("the guest's dialog gone", () => absent(g, marker));
		await waitFor("relay connected, no input required", async () =>
			(await listed()).find(l => l.relayConnected && !l.inputRequired),
		);
		await shown(h, marker, "host");
		expect(existsSync(join(cwd, marker))).toBe(false);
		h.type("\r");
		expect((await pending).isError).toBe(false);
		expect(existsSync(join(cwd, marker))).toBe(true);
		expect(absent(g, marker)).toBe(true);
	}, 120_000);
});
