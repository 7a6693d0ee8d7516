import { describe, expect, test } from "bun:test";
import { clientName, MAX_CLIENT_NAME } from "../../../src/core/client-name.ts";
// The writer (the bridge) and the reader (the headless host) of one format, held together here.
import { parseCallerLabel } from "../../../src/headless/frames.ts";
import { callerLabel } from "../../../src/host/remote-calls.ts";

describe("clientName (hostile clientInfo)", () => {
	test("a plain name -> as sent", () => {
		expect(clientName({ name: "claude-code", version: "1" })).toBe("claude-code");
	});
	test("missing, non-object, non-string or blank -> null", () => {
		for (const v of [undefined, null, "x", 3, [], {}, { name: 3 }, { name: "" }, { name: " \n\t" }])
			expect(clientName(v)).toBe(null);
	});
	test("escape sequences and line breaks -> spaces; bidi and invisible format characters dropped", () => {
		const out = clientName({ name: "a\u001b[2Jb\r\nc\u202ed\u2028e\u0085f\u0000g" }) as string;
		expect(out).toBe("a [2Jb  cd e f g");
		const codes = [...out].map(c => c.codePointAt(0) ?? 0);
		expect(codes.some(c => c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || (c >= 0x202a && c <= 0x202e))).toBe(
			false,
		);
	});
	test("issue 20 item 9: every Bidi_Control and invisible format character is dropped (U+061C, U+200B-D, U+2060, U+FEFF…)", () => {
		const hidden = [
			"\u061c",
			"\u200b",
			"\u200c",
			"\u200d",
			"\u200e",
			"\u200f",
			"\u202a",
			"\u202e",
			"\u2060",
			"\u2066",
			"\u2069",
			"\ufeff",
			"\u00ad",
			"\ud800",
		];
		expect(clientName({ name: `cl${hidden.join("")}aude` })).toBe("claude");
		expect(clientName({ name: hidden.join("") })).toBeNull();
	});
	test("long names -> capped at 64 characters plus an ellipsis, never splitting a surrogate pair", () => {
		const out = clientName({ name: "😀".repeat(100) }) as string;
		expect([...out].length).toBe(MAX_CLIENT_NAME + 1);
		expect(out.endsWith("😀…")).toBe(true);
	});
});

describe("callerLabel / parseCallerLabel", () => {
	test("round trip with and without a client", () => {
		const a = callerLabel("bash", { tokenName: "ci", client: "claude code (v2), x" });
		expect(a).toBe("A2A remote call: bash — token ci, client claude code (v2), x awaits approval");
		expect(parseCallerLabel(a)).toEqual({ tool: "bash", tokenName: "ci", client: "claude code (v2), x" });
		expect(parseCallerLabel(callerLabel("read", { tokenName: "owner", client: null }))).toEqual({
			tool: "read",
			tokenName: "owner",
			client: null,
		});
	});
	test("other notifications -> null", () => {
		for (const m of [
			"",
			"A2A bridge listening on http://x/ (token abc…)",
			"A2A remote call: bash awaits approval",
			"hello",
		])
			expect(parseCallerLabel(m)).toBe(null);
	});
});
