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
