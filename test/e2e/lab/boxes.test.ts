/**
 * Several boxes from one client (issue 31 item 4, contract §20): each host prints its mcpServers entry under a
 * name of its own (the config's `name`, else omp-<host name>-<port>), the same after a restart, so two entries
 * pasted into one client's config stay two. One caller omp gets both entries in its mcp.json and runs `bash`
 * on each; the marker each host finds in its own working directory says which box ran what.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { entryName } from "../../../src/host/commands.ts";
import { Host, ROOT } from "../../helpers/host.ts";
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
			expect(nameA).toBe(entryName(undefined, hostname(), first.port));
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
