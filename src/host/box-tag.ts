/**
 * The box tag in a default entry name (contract §20): boxes cloned from one image share a host name but not a
 * machine id, which image tooling resets per clone. The tag is an app-specific hash of `/etc/machine-id`, never
 * the id itself (systemd asks apps not to show it); no usable id means no tag, and the name stays as before.
 */
import { createHmac } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

const MACHINE_ID_FILE = "/etc/machine-id";
/** Tests point two hosts of one machine at two machine ids (docs/testing.md); nothing else sets it. */
const MACHINE_ID_FILE_VAR = "A2A_BRIDGE_MACHINE_ID_FILE";
/** A machine id is 32 hex digits; anything longer is not one and is not read whole. */
const MAX_READ = 64;
const TAG_HEX = 6;

/** The file the machine id is read from: `/etc/machine-id`, or the tests' own. */
export function machineIdFile(env: Readonly<Record<string, string | undefined>>): string {
	return env[MACHINE_ID_FILE_VAR] || MACHINE_ID_FILE;
}

/**
 * The tag for a machine id's text: the first 6 hex digits of HMAC-SHA256 keyed with the id over "pi-a2a-ext".
 * Undefined unless the text is one id (32 hex digits, surrounding space ignored) and not all zeros. @internal
 */
export function boxTag(machineId: string | undefined): string | undefined {
	const id = machineId?.trim().toLowerCase() ?? "";
	if (!/^[0-9a-f]{32}$/.test(id) || /^0+$/.test(id)) return undefined;
	return createHmac("sha256", id).update("pi-a2a-ext").digest("hex").slice(0, TAG_HEX);
}

/**
 * The tag of the machine id in `path`; undefined when it is missing, unreadable, not a regular file or holds
 * no id. Opened without blocking and read at most MAX_READ bytes, so a FIFO or /dev/zero there cannot hang a start.
 */
export function readBoxTag(path: string): string | undefined {
	let fd: number | undefined;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
		if (!fstatSync(fd).isFile()) return undefined;
		const buf = Buffer.alloc(MAX_READ + 1);
		const n = readSync(fd, buf, 0, buf.length, 0);
		return n > MAX_READ ? undefined : boxTag(buf.subarray(0, n).toString("utf8"));
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}
