/**
 * RFC 9530 digest fields on `/blob` (contract §7): `Repr-Digest` (the whole file as it will stand),
 * `Content-Digest` (this request's bytes) and `Want-Repr-Digest`. Each is a Structured Field dictionary
 * (RFC 8941 §3.2), parsed whole; sha-256 is the one algorithm computed, other keys are skipped. Pure.
 */

import type { Refused } from "../core/types.ts";
import type { BlobParsed } from "./parse.ts";

type Bare = { kind: "bytes"; value: Uint8Array } | { kind: "int"; value: number } | { kind: "other" };
/** Keys are unique (the last one wins, RFC 8941 §3.2); parameters are parsed and dropped. */
type Dictionary = Map<string, Bare>;

const KEY = /^[a-z*][a-z0-9_\-.*]*/;
const TOKEN = /^[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*/;
const NUMBER = /^-?[0-9]{1,15}(\.[0-9]{1,3})?/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * RFC 8941 §3.3.5 byte sequence content: base64 with or without its `=` padding; null for anything that
 * is no base64 at all (`A`: 6 bits cannot end a byte), so a malformed field is a refusal, never a throw.
 */
function base64Bytes(b64: string): Uint8Array | null {
	if (!BASE64.test(b64)) return null;
	const bare = b64.replace(/=+$/, "");
	if (bare.length % 4 === 1) return null;
	if (bare.length !== b64.length && b64.length % 4 !== 0) return null;
	return new Uint8Array(Buffer.from(bare, "base64"));
}

/** A tiny cursor parser: each step returns false on malformed input. */
class Cursor {
	pos = 0;
	constructor(readonly s: string) {}
	get done(): boolean {
		return this.pos >= this.s.length;
	}
	peek(): string {
		return this.s[this.pos] ?? "";
	}
	skip(re: RegExp): void {
		while (!this.done && re.test(this.peek())) this.pos++;
	}
	take(re: RegExp): string | null {
		const m = re.exec(this.s.slice(this.pos));
		if (m === null) return null;
		this.pos += m[0].length;
		return m[0];
	}
}

function bareItem(c: Cursor): Bare | null {
	const ch = c.peek();
	if (ch === ":") {
		const end = c.s.indexOf(":", c.pos + 1);
		if (end < 0) return null;
		const bytes = base64Bytes(c.s.slice(c.pos + 1, end));
		if (bytes === null) return null;
		c.pos = end + 1;
		return { kind: "bytes", value: bytes };
	}
	if (ch === '"') {
		for (let i = c.pos + 1; i < c.s.length; i++) {
			if (c.s[i] === "\\") i++;
			else if (c.s[i] === '"') {
				c.pos = i + 1;
				return { kind: "other" };
			}
		}
		return null;
	}
	if (ch === "?") {
		c.pos++;
		return c.take(/^[01]/) === null ? null : { kind: "other" };
	}
	const num = c.take(NUMBER);
	if (num !== null) return num.includes(".") ? { kind: "other" } : { kind: "int", value: Number(num) };
	return c.take(TOKEN) === null ? null : { kind: "other" };
}

function params(c: Cursor): boolean {
	while (c.peek() === ";") {
		c.pos++;
		c.skip(/ /);
		if (c.take(KEY) === null) return false;
		if (c.peek() === "=") {
			c.pos++;
			if (bareItem(c) === null) return false;
		}
	}
	return true;
}

/** An item or an inner list (inner lists are never a digest: they come back as "other"). */
function member(c: Cursor): Bare | null {
	if (c.peek() !== "(") {
		const item = bareItem(c);
		return item !== null && params(c) ? item : null;
	}
	c.pos++;
	for (;;) {
		c.skip(/ /);
		if (c.peek() === ")") {
			c.pos++;
			return params(c) ? { kind: "other" } : null;
		}
		if (c.done || bareItem(c) === null || !params(c)) return null;
		if (c.peek() !== " " && c.peek() !== ")") return null;
	}
}

/** RFC 8941 §4.2.2, for the item kinds a digest field can hold; null when malformed (it never throws). @internal */
export function parseDictionary(raw: string): Dictionary | null {
	try {
		return dictionary(raw);
	} catch {
		return null;
	}
}

function dictionary(raw: string): Dictionary | null {
	const c = new Cursor(raw.trim());
	const out: Dictionary = new Map();
	while (!c.done) {
		const key = c.take(KEY);
		if (key === null) return null;
		let value: Bare | null = { kind: "other" };
		if (c.peek() === "=") {
			c.pos++;
			value = member(c);
		} else if (!params(c)) value = null;
		if (value === null) return null;
		out.set(key, value);
		c.skip(/[ \t]/);
		if (c.done) break;
		if (c.peek() !== ",") return null;
		c.pos++;
		c.skip(/[ \t]/);
		if (c.done) return null;
	}
	return out;
}

const SHA256 = "sha-256";
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
export const sfSha256 = (hexDigest: string): string =>
	`${SHA256}=:${Buffer.from(hexDigest, "hex").toString("base64")}:`;

const bad = (why: string): Refused<"bad_digest"> => ({
	ok: false,
	code: "bad_digest",
	why,
});

/**
 * The sha-256 (hex) a `Repr-Digest` or `Content-Digest` field asks for; null when the header is absent.
 * Refused: malformed, a sha-256 that is not 32 bytes, or only algorithms this bridge does not compute
 * (accepting those would let the caller believe the bytes were checked).
 */
export function parseDigest(name: string, raw: string | null): BlobParsed<string | null> {
	if (raw === null) return { ok: true, value: null };
	const dict = parseDictionary(raw);
	if (dict === null) return bad(`${name} is not a Structured Field dictionary: '${raw.slice(0, 200)}'`);
	const sha = dict.get(SHA256);
	if (sha === undefined) {
		const names = [...dict.keys()].join(", ") || "none";
		return bad(`${name} names no algorithm this bridge computes (got: ${names}); send ${SHA256}=:<base64>:`);
	}
	if (sha.kind !== "bytes" || sha.value.byteLength !== 32) {
		return bad(`${name} ${SHA256} must be a byte sequence of 32 bytes (${SHA256}=:<base64>:)`);
	}
	return { ok: true, value: hex(sha.value) };
}

/** Whether `Want-Repr-Digest` asks for sha-256 (preference 1..10; 0 means "not that one"). */
export function wantsSha256(raw: string | null): BlobParsed<boolean> {
	if (raw === null) return { ok: true, value: false };
	const dict = parseDictionary(raw);
	if (dict === null) return bad(`Want-Repr-Digest is not a Structured Field dictionary: '${raw.slice(0, 200)}'`);
	for (const v of dict.values()) {
		if (v.kind !== "int" || v.value < 0 || v.value > 10) {
			return bad("Want-Repr-Digest preferences are integers 0 to 10 (sha-256=1)");
		}
	}
	const pref = dict.get(SHA256);
	return { ok: true, value: pref?.kind === "int" && pref.value > 0 };
}
