import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { canonicalAddress, procAddress, resetConnection, socketInode } from "../../../src/core/tcp-reset.ts";

const HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
const row = (local: string, remote: string, inode: string) =>
	`   0: ${local} ${remote} 01 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0 20 4 30 10 -1\n`;

describe("finding a connection's socket in /proc/net/tcp{,6} (issue 38.3)", () => {
	test("IPv4 and IPv6 rows as the kernel spells them", () => {
		expect(procAddress("0100007F")).toBe("127.0.0.1");
		expect(procAddress("00000000000000000000000001000000")).toBe("[::1]");
		expect(procAddress("0000000000000000FFFF00000100007F")).toBe(canonicalAddress("::ffff:127.0.0.1"));
		const table = HEAD + row("0100007F:1F90", "0100007F:CD12", "4242") + row("0100007F:1F90", "0200007F:CD12", "99");
		expect(socketInode(table, 0x1f90, { address: "127.0.0.1", port: 0xcd12 })).toBe("4242");
		expect(socketInode(table, 0x1f91, { address: "127.0.0.1", port: 0xcd12 })).toBeNull();
	});

	test("hostile or ambiguous input: no guess", () => {
		const twice = HEAD + row("0100007F:1F90", "0100007F:CD12", "1") + row("0100007F:1F90", "0100007F:CD12", "2");
		expect(socketInode(twice, 0x1f90, { address: "127.0.0.1", port: 0xcd12 })).toBeNull();
		for (const bad of ["", "\n\n", `${HEAD}garbage`, `${HEAD}${row("zz:1F90", "0100007F:CD12", "7")}`]) {
			expect(socketInode(bad, 0x1f90, { address: "127.0.0.1", port: 0xcd12 })).toBeNull();
		}
		expect(
			socketInode(HEAD + row("0100007F:1F90", "0100007F:CD12", "x1"), 0x1f90, { address: "127.0.0.1", port: 0xcd12 }),
		).toBeNull();
		expect(
			socketInode(HEAD + row("0100007F:1F90", "0100007F:CD12", "5"), 0x1f90, { address: "not an ip", port: 0xcd12 }),
		).toBeNull();
		for (const bad of ["", "0100007", "0100007G", "0100007F0", "X".repeat(32)]) expect(procAddress(bad)).toBeNull();
		for (const bad of ["", "1.2.3", "::g", "[::1]", "1.2.3.4.5"]) expect(canonicalAddress(bad)).toBeNull();
	});

	test("a live connection is reset: the peer reads ECONNRESET at once, not the queued megabytes", async () => {
		const big = new Uint8Array(32 * 1024 * 1024);
		let reset: boolean | undefined;
		const server = Bun.serve({
			hostname: "127.0.0.1",
			port: 0,
			fetch(req, srv) {
				const peer = srv.requestIP(req);
				setTimeout(() => {
					reset = peer !== null && resetConnection(srv.port ?? 0, peer);
				}, 200);
				return new Response(big);
			},
		});
		try {
			const sock = connect(server.port ?? 0, "127.0.0.1");
			let got = 0;
			sock.on("data", d => {
				got += d.length;
				// Never read on: everything that arrives is what the kernel queued.
				sock.pause();
			});
			const ended = new Promise<string>(resolve => {
				sock.on("error", e => resolve((e as NodeJS.ErrnoException).code ?? String(e)));
				sock.on("close", () => resolve("close"));
			});
			sock.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
			await Bun.sleep(400);
			expect(reset).toBe(true);
			sock.resume();
			expect(await ended).toBe("ECONNRESET");
			expect(got).toBeLessThan(big.length);
		} finally {
			await server.stop(true);
		}
	});
});
