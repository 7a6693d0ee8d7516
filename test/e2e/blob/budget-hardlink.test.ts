/**
 * Attack finding (attack3, rule 2 "one spelling per own path"): a hard link to `<audit>.budget` (the shared
 * per-token audit budget, rewritten in place under flock) is not known as the bridge's own file: POST /blob
 * through the link appends to the live budget file, and the next charge keeps the planted line. A line
 * `NAME <level> <time>` written after the token's own resets its budget (rule 4). A hard link to the log
 * itself is refused ("by another name"); the budget file's is not.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("attack: /blob through a hard link to the audit budget file", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("POST to a hard link of <audit>.budget: refused as own_file, no planted line in the file", async () => {
		const budget = `${host.auditPath}.budget`;
		const dir = mkdtempSync(join(host.home, "a2a-hl-"));
		try {
			// Any /blob request charges the token's budget, so the file exists.
			await (
				await fetch(`${host.url}blob?path=${encodeURIComponent("/etc/hostname")}`, { headers: host.headers() })
			).arrayBuffer();
			await waitFor("the budget file", () => existsSync(budget));
			const link = join(dir, "innocent.txt");
			linkSync(budget, link);
			const replies: Array<{ status: number; body: string }> = [];
			// The request's own charge may grow the file before the offset is checked: a few tries.
			for (let i = 0; i < 4; i++) {
				const offset = statSync(budget).size;
				const res = await fetch(`${host.url}blob?path=${encodeURIComponent(link)}&offset=${offset}`, {
					method: "POST",
					headers: host.headers({ "content-type": "application/octet-stream" }),
					body: "attack3 1 1\n",
				});
				replies.push({ status: res.status, body: await res.text() });
				if (res.status !== 409) break;
			}
			const last = replies.at(-1);
			console.log(JSON.stringify(replies));
			expect({ status: last?.status, code: /"code":"(\w+)"/.exec(last?.body ?? "")?.[1] }).toEqual({
				status: 403,
				code: "own_file",
			});
			expect(readFileSync(budget, "utf8")).not.toContain("attack3");
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	}, 60_000);
});
