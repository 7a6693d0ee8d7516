/**
 * The request target as a URL against a fixed base. Bun builds `req.url` from the Host header, so a
 * hostile Host can make `new URL(req.url)` throw; the path and query never depend on it.
 */
export function requestTarget(url: string): URL {
	const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*([^#]*)/.exec(url);
	const target = m?.[1] || "/";
	try {
		return new URL(target.startsWith("/") ? target : `/${target}`, "http://bridge.invalid");
	} catch {
		return new URL("http://bridge.invalid/");
	}
}

/**
 * The path of the request target without building a URL (the hot path only routes on it). Percent
 * escapes stay as sent, so `/%6Dcp` is not `/mcp`: unknown paths get 404, never a wrong route.
 */
export function requestPath(url: string): string {
	const scheme = url.indexOf("://");
	if (scheme < 0) return "/";
	const slash = url.indexOf("/", scheme + 3);
	if (slash < 0) return "/";
	let end = url.length;
	for (const c of ["?", "#"]) {
		const i = url.indexOf(c, slash);
		if (i >= 0 && i < end) end = i;
	}
	return url.slice(slash, end);
}
