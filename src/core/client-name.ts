/**
 * The caller's self-declared client name (`clientInfo.name`), made safe to show: it is printed in the
 * host's TUI, the headless host's terminal and `/a2a`, so control characters (escape sequences, line
 * breaks) become spaces and the length is capped. It identifies nothing: any caller may claim any name.
 */
export const MAX_CLIENT_NAME = 64;

export function clientName(clientInfo: unknown): string | null {
	if (typeof clientInfo !== "object" || clientInfo === null) return null;
	const name = (clientInfo as { name?: unknown }).name;
	if (typeof name !== "string") return null;
	const clean = [...name]
		.map(ch => (unsafe(ch.codePointAt(0) ?? 0) ? " " : ch))
		.join("")
		.trim();
	if (clean === "") return null;
	const chars = [...clean];
	return chars.length > MAX_CLIENT_NAME ? `${chars.slice(0, MAX_CLIENT_NAME).join("")}…` : clean;
}

/** C0, DEL, C1, the Unicode line/paragraph separators and the bidi controls: they rewrite a terminal line. */
function unsafe(cp: number): boolean {
	return (
		cp <= 0x1f ||
		(cp >= 0x7f && cp <= 0x9f) ||
		cp === 0x2028 ||
		cp === 0x2029 ||
		cp === 0x200e ||
		cp === 0x200f ||
		(cp >= 0x202a && cp <= 0x202e) ||
		(cp >= 0x2066 && cp <= 0x2069)
	);
}
