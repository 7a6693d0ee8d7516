/**
 * Attack finding (attack3, rule 3 "revocation reaches everything a token holds"): a regular-file download
 * small enough for the host's socket send buffer (loopback: up to tcp_wmem's 4 MiB) is handed whole to the
 * kernel, Bun calls the response done, its slot is freed, and a later revoke finds nothing to reset: a reader
 * (default buffers; pauses, then reads) gets the whole rest of the file after the revoke (2.8 MB, no reset, no
 * "was reset" line on host stderr). The 48 MB case in slots.test.ts never fits the buffer, so it passes.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { a2aAnswer, addLiveToken } from "../../helpers/a2a-command.ts";
import { type Host, useSharedHost } from "../../helpers/host.ts";
import { followReader } from "../../helpers/reader-progress.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("attack: revoking a token while a 3 MB download sits in the host's send buffer", () => {
	let host: Host;
	useSharedHost({}, h => ({ host } = h));

	test("a reader that pauses: reset at the revoke, < 1 MiB (its own receive buffer) after it", async () => {
		const dir = mkdtempSync(join(tmpdir(), "a2a-queued-"));
		const file = join(dir, "three.bin");
		writeFileSync(file, Buffer.alloc(3_000_000));
		const secret = await addLiveToken(host, "queued");
		// A reader with the kernel's default buffers: reads 128 KiB, stops until told, then reads to the end.
		const reader = [
			"import socket,sys,json",
			"s=socket.create_connection(('127.0.0.1',int(sys.argv[1])))",
			"h=f'Host: 127.0.0.1:{sys.argv[1]}\\r\\nAuthorization: Bearer {sys.argv[3]}\\r\\n'",
			"s.sendall(f'GET {sys.argv[2]} HTTP/1.1\\r\\n{h}\\r\\n'.encode())",
			"got=0",
			"while got<128*1024: got+=len(s.recv(65536))",
			"print(json.dumps({'got':got}),flush=True)",
			"sys.stdin.readline()",
			"s.settimeout(4)",
			"try:",
			"  while True:",
			"    d=s.recv(1<<20)",
			"    if not d: print(json.dumps({'got':got,'end':'eof'}),flush=True); break",
			"    got+=len(d); print(json.dumps({'got':got}),flush=True)",
			"except OSError as e:",
			"  end='reset' if isinstance(e,ConnectionResetError) else str(e)",
			"  print(json.dumps({'got':got,'end':end}),flush=True)",
		].join("\n");
		const target = `/blob?path=${encodeURIComponent(file)}`;
		const proc = Bun.spawn(["python3", "-c", reader, String(host.port), target, secret], {
			stdin: "pipe",
			stdout: "pipe",
			stderr: "inherit",
		});
		const state = followReader(proc.stdout);
		try {
			await waitFor("the first bytes", () => state.got > 128 * 1024, { timeoutMs: 20_000 });
			// Long enough for Bun to hand the rest of the file to the kernel.
			await Bun.sleep(2000);
			const atRevoke = state.got;
			await a2aAnswer(host, "/a2a token revoke queued", m => m.includes("token 'queued' revoked"));
			await Bun.sleep(1000);
			proc.stdin.write("go\n");
			proc.stdin.flush();
			await waitFor("the reader's end", () => state.end !== undefined, { timeoutMs: 10_000 }).catch(() => {});
			const after = state.got - atRevoke;
			console.log(`after the revoke: ${after} bytes, end ${state.end}`);
			expect({ end: state.end, afterUnder1MiB: after < 1024 * 1024 }).toEqual({
				end: "reset",
				afterUnder1MiB: true,
			});
		} finally {
			proc.kill();
			rmSync(dir, { recursive: true, force: true });
		}
	}, 60_000);
});
