/**
 * The caller's self-declared client name (`clientInfo.name`), made safe to show: it is printed in the
 * host's TUI, the headless host's terminal and `/a2a`, so control characters (escape sequences, line
 * breaks) become spaces, format characters (every Bidi_Control, zero-width and invisible one) and lone
 * surrogates are dropped, and the length is capped. It identifies nothing: any caller may claim any name.
 * @internal
 */
export const MAX_CLIENT_NAME = 64;

export function clientName(clientInfo: unknown): string | null {
	if (typeof clientInfo !== "object" || clientInfo === null) return null;
	const name = (clientInfo as { name?: unknown }).name;
	if (typeof name !== "string") return null;
	const clean = name.replace(INVISIBLE, "").replace(CONTROL, " ").trim();
	if (clean === "") return null;
	const chars = [...clean];
	return chars.length > MAX_CLIENT_NAME ? `${chars.slice(0, MAX_CLIENT_NAME).join("")}…` : clean;
}

/** C0, DEL, C1 and the Unicode line/paragraph separators: they break or rewrite a terminal line. */
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/gu;
/** Format characters (Cf: bidi controls U+061C, U+200E/F, U+202A-E, U+2066-9; U+200B-D, U+2060, U+FEFF, …). */
const INVISIBLE = /[\p{Cf}\p{Cs}]/gu;
