/**
 * Attack finding (rule 3 "revocation reaches everything a token holds"): a download of a kernel pseudo-file
 * (streamed to EOF with no length: `/proc/<pid>/pagemap`, `/proc/kcore`) is not reset when its token is
 * revoked. Its audit record is written only at its end, so the revoke sees a download "not recorded yet" and
 * closes it softly (the path for a digest wait), or not at all: the slow reader keeps receiving. Same reader
 * and bounds as the regular-file case in test/e2e/blob/slots.test.ts (a 48 MB regular file read the same way:
 * 4 KiB after the revoke, reset in 46 ms; this pseudo-file: 294 KiB over 1.25 s, then a reset).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { a2aAnswer, addLiveToken } from "../../helpers/a2a-command.ts";
import { auditRecords } from "../../helpers/audit.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { followReader } from "../../helpers/reader-progress.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("attack: revoking a token during a slow pseudo-file download", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("/proc/self/pagemap (the host's own) read at 256 KiB/s: reset, < 256 KiB after the revoke, one audit record", async () => {
		const secret = await addLiveToken(host, "pseudo");
		const file = "/proc/self/pagemap";
		const script = join(import.meta.dir, "../../fixtures/slow_reader.py");
		const target = `/blob?path=${encodeURIComponent(file)}`;
		const proc = Bun.spawn(["python3", script, String(host.port), target, secret, String(256 * 1024)], {
			stdout: "pipe",
			stderr: "inherit",
		});
		const state = followReader(proc.stdout);
		try {
			await waitFor("the first bytes", () => state.got > 512 * 1024, { timeoutMs: 20_000 });
			const atRevoke = state.got;
			const revokedAt = performance.now();
			await a2aAnswer(host, "/a2a token revoke pseudo", m => m.includes("token 'pseudo' revoked"));
			await waitFor("the reader's end", () => state.end !== undefined, { timeoutMs: 8_000 }).catch(() => {});
			const after = state.got - atRevoke;
			console.log(
				`after the revoke: ${after} bytes in ${Math.round(performance.now() - revokedAt)} ms, end ${state.end}`,
			);
			expect({ end: state.end, afterUnder256KiB: after < 256 * 1024 }).toEqual({
				end: "reset",
				afterUnder256KiB: true,
			});
			await Bun.sleep(1000);
			const recs = auditRecords<{ tool: string; args: string }>(
				host,
				r => r.tool === "blob:read" && String(r.args).includes(file),
			);
			expect(recs).toHaveLength(1);
		} finally {
			proc.kill();
		}
	}, 60_000);
});
