/**
 * Several boxes from one client (issue 31 item 4, issue 39 item 9, contract §20): each host prints its mcpServers
 * entry under a name of its own (the config's `name`, else omp-<host name>-<box tag>-<port>), the same after a
 * restart, so two entries pasted into one client's config stay two, clones of one image included. One caller omp gets both entries in its mcp.json and runs `bash`
 * on each; the marker each host finds in its own working directory says which box ran what.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";
import { boxTag } from "../../../src/host/box-tag.ts";
import { entryName } from "../../../src/host/commands.ts";
import { BUN, defaultEntryName, freePort, Host, ROOT } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

const BOXES_PROBE = join(ROOT, "test", "fixtures", "boxes-caller-ext.ts");
type Entry = { mcpServers: Record<string, { url: string; headers: { Authorization: string } }> };

/** What `/a2a mcp-json` prints in the host (its notification), parsed. */
async function printedEntry(host: Host): Promise<Entry> {
	const before = host.notifications().length;
	await host.command("/a2a mcp-json");
	const text =
		host
			.notifications()
			.slice(before)
			.find(m => m.includes("mcpServers")) ?? "";
	return JSON.parse(text.split("\nNote:")[0] as string) as Entry;
}

describe("two boxes, one client", () => {
	test("entries are named per host and stable across a restart; one caller with both calls each box, each marker on its own box", async () => {
		const hosts: Host[] = [];
		try {
			const first = await Host.start();
			hosts.push(first);
			const [nameA] = Object.keys((await printedEntry(first)).mcpServers);
			expect(nameA).toBe(defaultEntryName(first.port));
			expect(nameA).toMatch(/^omp-[a-z0-9-]+-\d+$/);
			// A restart with the same config (port and token) prints the same entry name.
			await first.stop();
			const a = await Host.start({ config: { port: first.port, token: first.token } });
			hosts.push(a);
			const entryA = await printedEntry(a);
			expect(Object.keys(entryA.mcpServers)).toEqual([nameA as string]);
			const b = await Host.start({ config: { name: "lab-b" } });
			hosts.push(b);
			const entryB = await printedEntry(b);
			expect(Object.keys(entryB.mcpServers)).toEqual(["lab-b"]);

			// Pasted side by side into one client's config: two entries, each with its own URL and token.
			const both = { mcpServers: { ...entryA.mcpServers, ...entryB.mcpServers } };
			expect(Object.keys(both.mcpServers)).toHaveLength(2);
			const caller = await Host.start({
				config: null,
				bridge: false,
				files: { ".omp/agent/mcp.json": JSON.stringify(both) },
				args: ["-e", BOXES_PROBE],
				env: { A2A_CALLER_ENTRIES: `${nameA},lab-b`, A2A_CALLER_COMMAND: "echo {entry} > box.txt; cat box.txt" },
			});
			hosts.push(caller);
			await waitFor("the caller's CALLER done", () => caller.stderr.includes("CALLER done"), {
				timeoutMs: 60_000,
				seen: () => caller.stderr,
			});
			expect(caller.stderr).not.toContain("CALLER error");
			// Second channel: each box ran the call meant for it, in its own working directory.
			expect(readFileSync(join(a.cwd, "box.txt"), "utf8").trim()).toBe(nameA as string);
			expect(readFileSync(join(b.cwd, "box.txt"), "utf8").trim()).toBe("lab-b");
		} finally {
			for (const h of hosts.reverse()) {
				await h.stop();
				h.cleanup();
			}
		}
	}, 150_000);
});

describe("clones of one image: one host name, one pinned port, each its own machine id", () => {
	test("each prints its own name (and npm run token's entry agrees); a box with no usable id keeps omp-<host>-<port>", async () => {
		const ids = mkdtempSync(join(tmpdir(), "a2a-machine-ids-"));
		const idFile = (name: string, text: string) => {
			writeFileSync(join(ids, name), text);
			return join(ids, name);
		};
		const idA = "0123456789abcdef0123456789abcdef";
		const idB = "fedcba9876543210fedcba9876543210";
		const files = { a: idFile("a", `${idA}\n`), b: idFile("b", `${idB}\n`), none: idFile("none", "uninitialized\n") };
		const hosts: Host[] = [];
		try {
			// Both configs pin the same port, as a config baked into the image would: the clone's start falls back.
			const port = await freePort();
			const start = async (id: string, wait: boolean) => {
				const env = { A2A_BRIDGE_MACHINE_ID_FILE: id };
				const h = await Host.start({ config: { port }, env, waitForPort: wait });
				hosts.push(h);
				if (!wait) {
					await waitFor("the clone's port fallback notice", () => h.notifications().some(m => m.includes("busy")), {
						timeoutMs: 30_000,
						seen: () => h.notifications().join("\n"),
					});
				}
				return { h, name: Object.keys((await printedEntry(h)).mcpServers)[0] };
			};
			const a = await start(files.a, true);
			const b = await start(files.b, false);
			const c = await start(files.none, false);
			expect([a.name, b.name, c.name]).toEqual([
				entryName(undefined, hostname(), port, boxTag(idA)),
				entryName(undefined, hostname(), port, boxTag(idB)),
				entryName(undefined, hostname(), port),
			]);
			expect(new Set([a.name, b.name, c.name]).size).toBe(3);
			// Second channel: the token script, reading the clone's config and machine id, names the same entry.
			const token = spawnSync([BUN, join(ROOT, "scripts", "token.ts"), "add", "laptop"], {
				cwd: b.h.cwd,
				env: { ...process.env, HOME: b.h.home, A2A_BRIDGE_MACHINE_ID_FILE: files.b },
			});
			const out = token.stdout.toString();
			expect({ code: token.exitCode, named: out.includes(`"${b.name}"`) }).toEqual({ code: 0, named: true });
		} finally {
			for (const h of hosts.reverse()) {
				await h.stop();
				h.cleanup();
			}
			rmSync(ids, { recursive: true, force: true });
		}
	}, 150_000);
});
