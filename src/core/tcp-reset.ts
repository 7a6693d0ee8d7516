/**
 * Resets one accepted TCP connection of this process (contract §16, §19): a revoked download must stop at
 * once, and a close lets the kernel drain what it already queued (megabytes to a slow reader). Bun gives a
 * request no socket, so the connection is found from its peer address in /proc/self/net/tcp{,6} and its
 * descriptor in /proc/self/fd, and `connect(fd, AF_UNSPEC)` (Linux `tcp_disconnect`) sends a RST and drops
 * the queued bytes while the descriptor stays Bun's, which then sees the error and closes it. Linux only.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** An address as /proc/net/tcp{,6} spells it (hex, 32-bit words in host order) in the form Bun reports it. @internal */
export function procAddress(hex: string): string | null {
	if (!/^[0-9A-F]{8}(?:[0-9A-F]{24})?$/.test(hex)) return null;
	const bytes = (hex.match(/.{8}/g) ?? []).flatMap(w => [6, 4, 2, 0].map(i => Number.parseInt(w.slice(i, i + 2), 16)));
	if (bytes.length === 4) return bytes.join(".");
	const groups = Array.from({ length: 8 }, (_, i) =>
		(((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)).toString(16),
	);
	return canonicalAddress(groups.join(":"));
}

/** One spelling per address: IPv6 (IPv4-mapped too) as the URL parser compresses it; null when unparsable. @internal */
export function canonicalAddress(text: string): string | null {
	if (!text.includes(":")) return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(text) ? text : null;
	try {
		return new URL(`http://[${text}]/`).hostname;
	} catch {
		return null;
	}
}

/** The row of the connection from `peer` to local port `localPort`: its socket inode and send queue. */
interface Row {
	inode: string;
	/** Bytes the kernel holds for the peer, not yet acknowledged. */
	sendQueue: number;
}

/**
 * The row of the connection from `peer` to local port `localPort` in a /proc/net/tcp{,6} table, or null when
 * no row, or more than one, matches (a guess could reset someone else's connection). Pure.
 */
function connectionRow(table: string, localPort: number, peer: { address: string; port: number }): Row | null {
	const want = canonicalAddress(peer.address);
	const found: Row[] = [];
	for (const line of table.split("\n").slice(1)) {
		const f = line.trim().split(/\s+/);
		const [local, remote, queues, inode] = [f[1], f[2], f[4], f[9]];
		if (local === undefined || remote === undefined || inode === undefined || !/^\d+$/.test(inode)) continue;
		const [lAddr, lPort] = local.split(":");
		const [rAddr, rPort] = remote.split(":");
		if (lAddr === undefined || rAddr === undefined || lPort === undefined || rPort === undefined) continue;
		if (Number.parseInt(lPort, 16) !== localPort || Number.parseInt(rPort, 16) !== peer.port) continue;
		if (procAddress(lAddr) === null || !/^[0-9A-F]{4}$/.test(lPort) || !/^[0-9A-F]{4}$/.test(rPort)) continue;
		const tx = /^([0-9A-F]{8}):[0-9A-F]{8}$/.exec(queues ?? "")?.[1];
		if (want !== null && procAddress(rAddr) === want && inode !== "0" && tx !== undefined) {
			found.push({ inode, sendQueue: Number.parseInt(tx, 16) });
		}
	}
	return found.length === 1 ? (found[0] as Row) : null;
}

/** The socket inode of that connection, or null (see `connectionRow`). Pure. @internal */
export function socketInode(table: string, localPort: number, peer: { address: string; port: number }): string | null {
	return connectionRow(table, localPort, peer)?.inode ?? null;
}

/** That connection's row in this process's tables, or null. */
function liveRow(localPort: number, peer: { address: string; port: number }): Row | null {
	for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
		try {
			const row = connectionRow(readFileSync(table, "utf8"), localPort, peer);
			if (row !== null) return row;
		} catch {
			// No such table (no IPv6): the other one may hold it.
		}
	}
	return null;
}

/** Bytes of this process's connection from `peer` still queued for it in the kernel; null when not found. */
export function queuedBytes(localPort: number, peer: { address: string; port: number }): number | null {
	return liveRow(localPort, peer)?.sendQueue ?? null;
}

type Connect = (fd: number, addr: unknown, len: number) => number;
let libcConnect: Connect | null | undefined;

function loadConnect(): Connect | null {
	if (process.platform !== "linux") return null;
	for (const name of ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"]) {
		try {
			const lib = dlopen(name, { connect: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 } });
			return (fd, addr, len) => lib.symbols.connect(fd, addr as never, len);
		} catch {
			// The next name; none loads: no reset here, the caller closes the connection its slower way.
		}
	}
	return null;
}

const UNSPEC = new Uint8Array(16);

/** Resets this process's connection from `peer` on local port `localPort`; false when it could not be found or reset. */
export function resetConnection(localPort: number, peer: { address: string; port: number }): boolean {
	libcConnect ??= loadConnect();
	if (libcConnect === null) return false;
	const inode = liveRow(localPort, peer)?.inode ?? null;
	if (inode === null) return false;
	const link = `socket:[${inode}]`;
	let names: string[];
	try {
		names = readdirSync("/proc/self/fd");
	} catch {
		return false;
	}
	for (const name of names) {
		let target = "";
		try {
			target = readlinkSync(`/proc/self/fd/${name}`);
		} catch {
			continue;
		}
		if (target === link) return libcConnect(Number(name), ptr(UNSPEC), UNSPEC.byteLength) === 0;
	}
	return false;
}
