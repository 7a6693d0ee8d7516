/**
 * The one bare reference of the benchmarks: `Bun.serve` with no auth, no checks, no session table and no
 * audit, doing only the work a row compares. Run as its own process (`bun bench/bare.ts` prints its port;
 * bench/child.ts starts it), or inside the host by bench/probe-ext.ts through the same `serveBare`.
 *
 * - any other path: MCP JSON-RPC answered with constants (the ceiling of this machine and load generator);
 *   or, given a token (BARE_TOKEN; BARE_CATALOG names the host's tools as JSON), doing the work every MCP
 *   request costs the bridge and nothing more: the Bearer secret looked up by its SHA-256, the body parsed
 *   and checked as JSON-RPC 2.0, the session looked up and bound to that secret, the same catalog;
 * - `POST|PUT /up?path&how`: the body to a file. `how` = `write` (each chunk `writeSync`) or `bunwrite`
 *   (`Bun.write(path, req)`), unhashed, context only; `hash` (each chunk written and hashed as it comes) or
 *   `bunwrite-hash` (piped, then the file hashed): the references that also compute SHA-256. A PUT stages
 *   beside the target, fsyncs, renames and fsyncs the directory, as the bridge's atomic replace does;
 * - `GET /down?path&digest`: `none` (the file as it is), `cold` (hash the file, then send it with
 *   `Repr-Digest`), `known` (send with the digest this server computed when it stored that path),
 *   `stream` (hash while sending: no header possible, context only).
 */
import { closeSync, fsyncSync, openSync, readFileSync, readSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { authenticate, TokenSet } from "../src/config/auth.ts";
import { readMessage } from "../src/core/body.ts";
import { MAX_BODY_BYTES } from "../src/core/facts.ts";

const CHUNK = 1024 * 1024;
const SESSION = "bare-session";
const TOOLS = {
	tools: [
		{
			name: "echo",
			description: "Echoes its text",
			inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
		},
	],
};
const INIT = {
	protocolVersion: "2025-11-25",
	capabilities: { tools: { listChanged: false } },
	serverInfo: { name: "bare", version: "0" },
};
const JSON_HEADERS = { "content-type": "application/json" };

/** Digests this server computed for the files it stored, by path (the `known` download). */
const known = new Map<string, string>();

const reprDigest = (hex: string): string => `sha-256=:${Buffer.from(hex, "hex").toString("base64")}:`;

/**
 * The same-work MCP server: the bridge's own token check (`authenticate` over a `TokenSet` holding `token`)
 * and body steps (`readMessage`: size limit, JSON, one JSON-RPC message), a session map bound to the
 * secret's digest, and `catalog` (the tools array as JSON) for `tools/list`. Nothing else of the bridge.
 */
function mcpSameWork(token: string, catalog: string): (req: Request) => Promise<Response> {
	const tokens = new TokenSet([{ name: "owner", token }]);
	const sessions = new Map<string, string>();
	const toolsJson = `{"tools":${catalog}}`;
	const answer = (status: number, body: string, headers: Record<string, string> = JSON_HEADERS) =>
		new Response(body, { status, headers });
	return async req => {
		const auth = authenticate(req.headers.get("authorization"), tokens);
		if (!auth.ok) return answer(401, '{"error":"unauthorized"}');
		const digest = auth.who.secretDigest;
		const msg = await readMessage(req, MAX_BODY_BYTES, auth.who);
		if (msg instanceof Response) return msg;
		const id = JSON.stringify(msg.kind === "notification" ? null : msg.id);
		if (msg.kind === "request" && msg.method === "initialize") {
			const sid = crypto.randomUUID();
			sessions.set(sid, digest);
			const body = `{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(INIT)}}`;
			return answer(200, body, { ...JSON_HEADERS, "mcp-session-id": sid });
		}
		if (sessions.get(req.headers.get("mcp-session-id") ?? "") !== digest)
			return answer(404, '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"session not found"}}');
		if (msg.kind !== "request") return new Response(null, { status: 202 });
		const result = msg.method === "tools/list" ? toolsJson : "{}";
		return answer(200, `{"jsonrpc":"2.0","id":${id},"result":${result}}`);
	};
}

async function mcp(req: Request): Promise<Response> {
	const msg = (await req.json()) as { id?: unknown; method?: string };
	if (msg.id === undefined) return new Response(null, { status: 202 });
	const result = msg.method === "initialize" ? INIT : msg.method === "tools/list" ? TOOLS : {};
	const headers = msg.method === "initialize" ? { ...JSON_HEADERS, "mcp-session-id": SESSION } : JSON_HEADERS;
	return new Response(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }), { headers });
}

function hashFile(path: string): string {
	const fd = openSync(path, "r");
	const hash = new Bun.CryptoHasher("sha256");
	const buf = new Uint8Array(CHUNK);
	try {
		for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) hash.update(buf.subarray(0, n));
	} finally {
		closeSync(fd);
	}
	return hash.digest("hex");
}

/** Writes the body to `path`; hashes it when asked. Resolves the byte count and the hex digest (or ""). */
async function store(req: Request, path: string, how: string): Promise<{ size: number; sha256: string }> {
	if (how === "bunwrite" || how === "bunwrite-hash") {
		const size = await Bun.write(path, req);
		return { size, sha256: how === "bunwrite-hash" ? hashFile(path) : "" };
	}
	const fd = openSync(path, "w");
	const hash = how === "hash" ? new Bun.CryptoHasher("sha256") : null;
	let size = 0;
	try {
		for await (const chunk of req.body ?? []) {
			writeSync(fd, chunk);
			hash?.update(chunk);
			size += chunk.byteLength;
		}
		if (req.method === "PUT") fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
	return { size, sha256: hash?.digest("hex") ?? "" };
}

function fsyncPath(path: string): void {
	const fd = openSync(path, "r");
	try {
		fsyncSync(fd);
	} finally {
		closeSync(fd);
	}
}

async function upload(req: Request, q: URLSearchParams): Promise<Response> {
	const path = q.get("path") ?? "";
	const how = q.get("how") ?? "write";
	const put = req.method === "PUT";
	const dest = put ? `${path}.bare-stage` : path;
	const got = await store(req, dest, how);
	if (put) {
		// `store` fsynced the chunk writer's file; the piped one is synced here. Then the atomic replace.
		if (how === "bunwrite" || how === "bunwrite-hash") fsyncPath(dest);
		renameSync(dest, path);
		fsyncPath(dirname(path));
	}
	if (got.sha256 !== "") known.set(path, got.sha256);
	return Response.json(got);
}

function hashingStream(path: string): ReadableStream<Uint8Array> {
	const fd = openSync(path, "r");
	const hash = new Bun.CryptoHasher("sha256");
	return new ReadableStream<Uint8Array>({
		pull(c) {
			const buf = new Uint8Array(CHUNK);
			const n = readSync(fd, buf);
			if (n === 0) {
				hash.digest("hex");
				closeSync(fd);
				c.close();
				return;
			}
			hash.update(buf.subarray(0, n));
			c.enqueue(buf.subarray(0, n));
		},
		cancel: () => closeSync(fd),
	});
}

function download(q: URLSearchParams): Response {
	const path = q.get("path") ?? "";
	const digest = q.get("digest") ?? "none";
	if (digest === "stream") return new Response(hashingStream(path));
	if (digest === "none") return new Response(Bun.file(path));
	const hex = digest === "known" ? known.get(path) : hashFile(path);
	if (hex === undefined) return new Response(`no known digest for ${path}`, { status: 409 });
	return new Response(Bun.file(path), { headers: { "repr-digest": reprDigest(hex) } });
}

/** Serves the bare reference on a random loopback port. */
export function serveBare(same?: { token: string; catalog: string }): Bun.Server<undefined> {
	return Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		maxRequestBodySize: Number.MAX_SAFE_INTEGER,
		routes: {
			"/up": (req, srv) => {
				srv.timeout(req, 0);
				return upload(req, new URL(req.url).searchParams);
			},
			"/down": (req, srv) => {
				srv.timeout(req, 0);
				return download(new URL(req.url).searchParams);
			},
		},
		fetch: same ? mcpSameWork(same.token, same.catalog) : mcp,
	});
}

if (import.meta.main) {
	const token = process.env.BARE_TOKEN;
	const catalog = process.env.BARE_CATALOG;
	const same = token ? { token, catalog: catalog ? readFileSync(catalog, "utf8") : "[]" } : undefined;
	process.stdout.write(`${serveBare(same).port}\n`);
}
