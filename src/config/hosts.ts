/**
 * How a listen address and a browser origin are spelled: which addresses are loopback in any spelling,
 * how an address goes into a URL, and the one canonical form of an origin. Pure; no lookups, so a name
 * counts as loopback only when it is spelled as one (a DNS answer could change under the bridge).
 */

/** localhost, 127.0.0.0/8, ::1 and the IPv4-mapped loopback ::ffff:127.0.0.0/104 in any IPv6 spelling. */
export function isLoopbackHost(host: string): boolean {
	const h = host.toLowerCase().replace(/^\[|\]$/g, "");
	if (h === "localhost" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
	if (!h.includes(":")) return false;
	let canonical: string;
	try {
		// The WHATWG URL parser writes an IPv6 address in its one compressed form (::ffff:7f00:1).
		canonical = new URL(`http://[${h}]/`).hostname;
	} catch {
		return false;
	}
	return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

/** The host part of a URL for a listen address: an IPv6 address in brackets (once), anything else as it is. */
export function urlHost(host: string): string {
	return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Canonical `scheme://host[:port]` of an origin string, or null when it is not one. */
export function normalizeOrigin(value: string): string | null {
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return null;
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") return null;
	if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== ""))
		return null;
	if (value.endsWith("/")) return null;
	return url.origin;
}
