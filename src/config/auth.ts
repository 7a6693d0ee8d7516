/**
 * Bearer authentication and the DNS-rebinding guard. Policy: deny on failure; a missing Origin
 * passes (non-browser clients send none); a presented secret is looked up by its SHA-256 digest
 * (TokenSet), so timing tells nothing about any stored secret.
 */
import { urlHost } from "./hosts.ts";

/** @internal */
export type BearerParse = { kind: "missing" } | { kind: "other_scheme" } | { kind: "bearer"; secret: string };

const LINE_BREAK = /[\n\r\u2028\u2029]/;

/** Parses an Authorization header value; the scheme is case-insensitive (RFC 7235). @internal */
export function parseBearer(header: string | null): BearerParse {
	if (header === null || header.trim() === "") return { kind: "missing" };
	// What clients send, "Bearer <secret>", skips the regex; the result is the same (tested against it).
	if (header.startsWith("Bearer ") && !LINE_BREAK.test(header))
		return { kind: "bearer", secret: header.slice(7).trim() };
	const match = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?:\s+(.*))?$/.exec(header);
	const scheme = match?.[1]?.toLowerCase();
	if (scheme !== "bearer") return { kind: "other_scheme" };
	return { kind: "bearer", secret: (match?.[2] ?? "").trim() };
}

/** Who presented a secret: its token's name (`owner` or a named token's) and the digest sessions are bound to. */
export interface Identity {
	tokenName: string;
	secretDigest: string;
	/** Aborts when this secret stops being live (revoked, or rotated away): checked again after the body. */
	ended?: AbortSignal;
}

/**
 * Every live token, looked up by the base64 SHA-256 of the presented secret. A Map keyed by digest
 * costs the same for 1 or 256 tokens, and its timing leaks nothing useful: the caller controls the
 * preimage, not the digest, so learning how a digest compares to a stored one needs a preimage.
 */
export class TokenSet {
	readonly #nameByDigest = new Map<string, string>();
	readonly #byName = new Map<string, { secret: string; secretDigest: string; ended: AbortController }>();

	/** `token` is the config file's field name for a secret (`tokens[].token`). */
	constructor(tokens: ReadonlyArray<{ name: string; token: string }>) {
		for (const t of tokens) this.set(t.name, t.token);
	}

	static digest(secret: string): string {
		return Bun.SHA256.hash(secret, "base64");
	}

	identify(presented: string): Identity | null {
		const secretDigest = TokenSet.digest(presented);
		const tokenName = this.#nameByDigest.get(secretDigest);
		const entry = tokenName === undefined ? undefined : this.#byName.get(tokenName);
		return tokenName === undefined || entry?.secretDigest !== secretDigest
			? null
			: { tokenName, secretDigest, ended: entry.ended.signal };
	}

	/**
	 * Adds the token `name`, or gives it a new secret (the old one stops working at once). A secret held by
	 * another name moves here: that name keeps its entry, but its digest no longer finds it and its `ended`
	 * stays unaborted until it is set or removed (a table applied as a whole, e.g. two swapped, ends consistent).
	 */
	set(name: string, secret: string): void {
		const old = this.#byName.get(name);
		if (old) {
			this.#unindex(name, old.secretDigest);
			old.ended.abort();
		}
		const secretDigest = TokenSet.digest(secret);
		this.#byName.set(name, { secret, secretDigest, ended: new AbortController() });
		this.#nameByDigest.set(secretDigest, name);
	}

	remove(name: string): boolean {
		const old = this.#byName.get(name);
		if (!old) return false;
		this.#byName.delete(name);
		this.#unindex(name, old.secretDigest);
		old.ended.abort();
		return true;
	}

	/** Drops a digest from the index only while it still names `name`: another name may hold that secret now. */
	#unindex(name: string, digest: string): void {
		if (this.#nameByDigest.get(digest) === name) this.#nameByDigest.delete(digest);
	}

	secret(name: string): string | undefined {
		return this.#byName.get(name)?.secret;
	}

	names(): string[] {
		return [...this.#byName.keys()];
	}

	get size(): number {
		return this.#byName.size;
	}

	secrets(): string[] {
		return [...this.#byName.values()].map(v => v.secret);
	}
}

/** The caller's identity, or the error row refusing it (`code`, core/errors.ts) and why, in core's refusal shape. */
export type AuthOutcome =
	| { ok: true; who: Identity }
	| { ok: false; code: "unauthorized" | "invalid_token"; why: string };

export function authenticate(header: string | null, tokens: TokenSet): AuthOutcome {
	const parsed = parseBearer(header);
	if (parsed.kind !== "bearer" || parsed.secret === "") {
		return { ok: false, code: "unauthorized", why: "no Bearer secret in the Authorization header" };
	}
	const who = tokens.identify(parsed.secret);
	return who === null
		? { ok: false, code: "invalid_token", why: "the secret is not a live token's" }
		: { ok: true, who };
}

export type HostOriginResult = { ok: true } | { ok: false; code: "forbidden_host" | "forbidden_origin"; why: string };
const badHost: HostOriginResult = { ok: false, code: "forbidden_host", why: "the Host name is not a loopback name" };
const badOrigin = (why: string): HostOriginResult => ({ ok: false, code: "forbidden_origin", why });

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The name part of a Host header (`name[:port]`, IPv6 in brackets), lower-cased; null if malformed. @internal */
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
	const bound = bindHost === undefined ? null : hostName(urlHost(bindHost));
	const isLoopbackName = name !== null && (LOOPBACK_NAMES.has(name) || name === bound);
	if (isLoopbackBind && !isLoopbackName) return badHost;
	if (origin === null) return { ok: true };
	let presented: string;
	try {
		presented = new URL(origin).origin;
	} catch {
		return badOrigin("the Origin is not a URL");
	}
	if (presented === "null") return badOrigin("the Origin is opaque (null)");
	if (allowedOrigins.includes(presented)) return { ok: true };
	if (host === null) return badOrigin("an Origin without a Host to compare it with");
	let self: string;
	try {
		self = new URL(`http://${host.trim()}`).origin;
	} catch {
		return badOrigin("the Host cannot form an origin");
	}
	return presented === self ? { ok: true } : badOrigin("the Origin is neither the Host's nor an allowed one");
}
