/**
 * Bearer authentication and the DNS-rebinding guard. Policy: deny on failure; a missing Origin
 * passes (non-browser clients send none); the token is compared in constant time over SHA-256
 * digests so neither its content nor its length leaks through timing.
 */
import { timingSafeEqual } from "node:crypto";

export type BearerParse = { kind: "missing" } | { kind: "other_scheme" } | { kind: "bearer"; token: string };

const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** Parses an Authorization header value; the scheme is case-insensitive (RFC 7235). */
export function parseBearer(header: string | null): BearerParse {
	if (header === null || header.trim() === "") return { kind: "missing" };
	// What clients send, "Bearer <token>", skips the regex; the result is the same (tested against it).
	if (header.startsWith("Bearer ") && !LINE_BREAK.test(header))
		return { kind: "bearer", token: header.slice(7).trim() };
	const match = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/.exec(header);
	const scheme = match?.[1]?.toLowerCase();
	if (scheme !== "bearer") return { kind: "other_scheme" };
	return { kind: "bearer", token: (match?.[2] ?? "").trim() };
}

// Bun's one-shot SHA-256 is about 6× cheaper than node:crypto's createHash, and runs on every request.
const digest = (s: string): Uint8Array => Bun.SHA256.hash(s) as Uint8Array;

// The expected token changes only on rotation: its digest is computed once per value.
let expectedCache: { token: string; digest: Uint8Array } | null = null;
const expectedDigest = (token: string): Uint8Array => {
	if (expectedCache?.token !== token) expectedCache = { token, digest: digest(token) };
	return expectedCache.digest;
};

export function tokensEqual(presented: string, expected: string): boolean {
	return timingSafeEqual(digest(presented), expectedDigest(expected));
}

/** Short non-secret fingerprint, used to bind sessions to the token that created them. */
export function tokenFingerprint(token: string): string {
	return Buffer.from(digest(token)).toString("hex").slice(0, 16);
}

export type AuthResult = { ok: true } | { ok: false; kind: "unauthorized" | "invalid_token" };

export function checkAuth(header: string | null, expected: string): AuthResult {
	const parsed = parseBearer(header);
	if (parsed.kind !== "bearer" || parsed.token === "") return { ok: false, kind: "unauthorized" };
	return tokensEqual(parsed.token, expected) ? { ok: true } : { ok: false, kind: "invalid_token" };
}

/** Who presented a token: its name (`owner` or a named token's) and the digest sessions are bound to. */
export interface Identity {
	name: string;
	fingerprint: string;
}

/**
 * Every live token, looked up by the base64 SHA-256 of the presented value. A Map keyed by digest
 * costs the same for 1 or 256 tokens, and its timing leaks nothing useful: the caller controls the
 * preimage, not the digest, so learning how a digest compares to a stored one needs a preimage.
 */
export class TokenSet {
	readonly #nameByDigest = new Map<string, string>();
	readonly #byName = new Map<string, { token: string; fingerprint: string }>();

	constructor(tokens: ReadonlyArray<{ name: string; token: string }>) {
		for (const t of tokens) this.set(t.name, t.token);
	}

	static digest(token: string): string {
		return Bun.SHA256.hash(token, "base64");
	}

	identify(presented: string): Identity | null {
		const fingerprint = TokenSet.digest(presented);
		const name = this.#nameByDigest.get(fingerprint);
		return name === undefined ? null : { name, fingerprint };
	}

	/** Adds `name`, or gives it a new secret (the old one stops working at once). */
	set(name: string, token: string): void {
		const old = this.#byName.get(name);
		if (old) this.#nameByDigest.delete(old.fingerprint);
		const fingerprint = TokenSet.digest(token);
		this.#byName.set(name, { token, fingerprint });
		this.#nameByDigest.set(fingerprint, name);
	}

	remove(name: string): boolean {
		const old = this.#byName.get(name);
		if (!old) return false;
		this.#byName.delete(name);
		this.#nameByDigest.delete(old.fingerprint);
		return true;
	}

	secret(name: string): string | undefined {
		return this.#byName.get(name)?.token;
	}

	fingerprint(name: string): string | undefined {
		return this.#byName.get(name)?.fingerprint;
	}

	names(): string[] {
		return [...this.#byName.keys()];
	}

	secrets(): string[] {
		return [...this.#byName.values()].map(v => v.token);
	}
}

export type AuthOutcome = { ok: true; who: Identity } | { ok: false; kind: "unauthorized" | "invalid_token" };

export function authenticate(header: string | null, tokens: TokenSet): AuthOutcome {
	const parsed = parseBearer(header);
	if (parsed.kind !== "bearer" || parsed.token === "") return { ok: false, kind: "unauthorized" };
	const who = tokens.identify(parsed.token);
	return who === null ? { ok: false, kind: "invalid_token" } : { ok: true, who };
}

export type HostOriginResult = { ok: true } | { ok: false; kind: "forbidden_host" | "forbidden_origin" };

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The name part of a Host header (`name[:port]`, IPv6 in brackets), lower-cased; null if malformed. */
export function hostName(host: string): string | null {
	const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
	return m?.[1] ? m[1].toLowerCase() : null;
}

/**
 * Host/Origin rules (contract §4 step 2): on a loopback bind the Host name must be a loopback name
 * (or the bound address itself, e.g. 127.0.0.2); a present Origin must equal `http://<Host>` or be
 * listed in `allowedOrigins` (already normalized).
 */
export function checkHostOrigin(
	host: string | null,
	origin: string | null,
	isLoopbackBind: boolean,
	allowedOrigins: readonly string[],
	bindHost?: string,
): HostOriginResult {
	const name = host === null ? null : hostName(host);
	const bound =
		bindHost === undefined
			? null
			: hostName(bindHost.includes(":") && !bindHost.startsWith("[") ? `[${bindHost}]` : bindHost);
	const isLoopbackName = name !== null && (LOOPBACK_NAMES.has(name) || name === bound);
	if (isLoopbackBind && !isLoopbackName) return { ok: false, kind: "forbidden_host" };
	if (origin === null) return { ok: true };
	let presented: string;
	try {
		presented = new URL(origin).origin;
	} catch {
		return { ok: false, kind: "forbidden_origin" };
	}
	if (presented === "null") return { ok: false, kind: "forbidden_origin" };
	if (allowedOrigins.includes(presented)) return { ok: true };
	if (host === null) return { ok: false, kind: "forbidden_origin" };
	let self: string;
	try {
		self = new URL(`http://${host.trim()}`).origin;
	} catch {
		return { ok: false, kind: "forbidden_origin" };
	}
	return presented === self ? { ok: true } : { ok: false, kind: "forbidden_origin" };
}
