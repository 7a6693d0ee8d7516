/**
 * Named tokens and the `/blob` switch (contract §14). A named token is an identity, not a permission:
 * every token carries the host's full reach, so an entry has exactly `name` and `token` and nothing
 * that could read like a scope. Pure validators returning a value or a message naming the field.
 */

export const OWNER = "owner";
const MIN_TOKEN_CHARS = 32;
export const TOKEN_NAME = /^[a-z0-9_-]{1,32}$/;
export const MAX_NAMED_TOKENS = 256;

export interface NamedToken {
	name: string;
	token: string;
}

/** What `/blob` serves (config `blob`, contract §14): a switch on the route's own methods, not a judgement of paths. */
export const BLOB_MODES = ["write", "read", "off"] as const;
export type BlobMode = (typeof BLOB_MODES)[number];

/** Why `value` cannot be a token (the §1 rules), or null when it can. */
export function tokenProblem(value: string): string | null {
	if (value.length < MIN_TOKEN_CHARS) return `must be at least ${MIN_TOKEN_CHARS} characters`;
	if (/\s/.test(value)) return "must not contain whitespace";
	if (!/^[\x21-\x7e]+$/.test(value)) return "must be printable ASCII";
	return null;
}

/** Why `name` cannot name a token, or null when it can. */
export function nameProblem(name: unknown): string | null {
	if (typeof name !== "string" || !TOKEN_NAME.test(name)) return "must be 1-32 characters of a-z, 0-9, '_' or '-'";
	if (name === OWNER) return `must not be '${OWNER}' (that is the top-level token's name)`;
	return null;
}

/** A field parser's answer: its value (`undefined`: as if absent), or the rule broken and where (`tokens[2].name`). */
export type FieldCheck<T> = { ok: true; value: T } | { ok: false; field?: string; why: string };

/**
 * The `tokens` array. `owner` is the top-level token when present, so a named token may not repeat it
 * (two names for one secret would make the audit lie about who called).
 */
export function validateTokens(raw: unknown, owner: string | undefined): FieldCheck<NamedToken[]> {
	const bad = (field: string, why: string): FieldCheck<never> => ({ ok: false, field, why });
	if (!Array.isArray(raw)) return bad("tokens", "must be an array of {name, token} objects");
	if (raw.length > MAX_NAMED_TOKENS) return bad("tokens", `must hold at most ${MAX_NAMED_TOKENS} entries`);
	const names = new Set<string>();
	const secrets = new Set<string>(owner === undefined ? [] : [owner]);
	const out: NamedToken[] = [];
	for (const [i, entry] of raw.entries()) {
		const at = `tokens[${i}]`;
		if (typeof entry !== "object" || entry === null || Array.isArray(entry))
			return bad(at, "must be an object {name, token}");
		const extra = Object.keys(entry).find(k => k !== "name" && k !== "token");
		if (extra !== undefined) {
			const why = "every token has the host's full reach; narrow it with tools.approvalMode / tools.approval";
			return bad(`${at}.${extra}`, `is not a token field (only name and token exist: ${why})`);
		}
		const { name, token } = entry as { name?: unknown; token?: unknown };
		const nameWhy = nameProblem(name);
		if (nameWhy !== null) return bad(`${at}.name`, nameWhy);
		if (names.has(name as string)) return bad(`${at}.name`, `repeats the name '${name as string}'`);
		if (typeof token !== "string") return bad(`${at}.token`, "must be a string");
		const tokenWhy = tokenProblem(token);
		if (tokenWhy !== null) return bad(`${at}.token`, tokenWhy);
		if (secrets.has(token)) return bad(`${at}.token`, "must differ from every other token (owner included)");
		names.add(name as string);
		secrets.add(token);
		out.push({ name: name as string, token });
	}
	return { ok: true, value: out };
}

/** What turns the live tokens into the file's: secrets to set (new names or new secrets) and names to revoke. */
interface TokenChanges {
	set: NamedToken[];
	revoke: string[];
}

/**
 * The difference between the live tokens (owner included, by name) and a re-read config file. The owner is
 * never revoked (a file without a string token keeps the live one); an unchanged secret is left alone, since
 * setting it again would end its sessions.
 */
export function tokenChanges(live: readonly NamedToken[], owner: string | undefined, named: readonly NamedToken[]) {
	const wanted = new Map(named.map(t => [t.name, t.token]));
	if (owner !== undefined) wanted.set(OWNER, owner);
	const now = new Map(live.map(t => [t.name, t.token]));
	const changes: TokenChanges = {
		set: [...wanted].filter(([name, token]) => now.get(name) !== token).map(([name, token]) => ({ name, token })),
		revoke: [...now.keys()].filter(name => name !== OWNER && !wanted.has(name)),
	};
	return changes;
}
