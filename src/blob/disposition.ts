/**
 * The `Content-Disposition` of a download (RFC 6266): the file's own base name, so `curl -OJ` and browsers
 * save it under that name. `filename` carries a safe ASCII spelling (no quote, backslash, control or
 * non-ASCII character), `filename*` the exact UTF-8 name whenever the two differ. Pure.
 */
import { basename } from "node:path";

/** Characters RFC 8187 lets stand bare in an `ext-value`; every other byte is percent-encoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/** What is left of a name in printable ASCII, with `"` and `\` (which would need escaping) replaced. */
const asciiOf = (name: string): string => name.replace(/[^\x20-\x7e]|["\\%]/gu, "_");

function extValue(name: string): string {
	let out = "UTF-8''";
	for (const byte of new TextEncoder().encode(name)) {
		const ch = String.fromCharCode(byte);
		out += byte < 0x80 && ATTR_CHAR.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
	}
	return out;
}

/** The header for a download of `path`. */
export function contentDisposition(path: string): string {
	const name = basename(path) || "download";
	const ascii = asciiOf(name);
	const plain = `attachment; filename="${ascii}"`;
	return ascii === name ? plain : `${plain}; filename*=${extValue(name)}`;
}
