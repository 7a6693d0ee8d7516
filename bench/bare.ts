/**
 * The one bare reference of the benchmarks: `Bun.serve` with no auth, no checks, no session table and no
 * audit, doing only the work a row compares. Run as its own process (`bun bench/bare.ts` prints its port;
 * bench/child.ts starts it), or inside the host by bench/probe-ext.ts through the same `serveBare`.
 *
 * - any other path: MCP JSON-RPC answered with constants (the ceiling of this machine and load generator);
 * - `POST|PUT /up?path&how`: the body to a file. `how` = `write` (each chunk `writeSync`) or `bunwrite`
 *   (`Bun.write(path, req)`), unhashed, context only; `hash` (each chunk written and hashed as it comes) or
 *   `bunwrite-hash` (piped, then the file hashed): the references that also compute SHA-256. A PUT stages
 *   beside the target, fsyncs, renames and fsyncs the directory, as the bridge's atomic replace does;
 * - `GET /down?path&digest`: `none` (the file as it is), `cold` (hash the file, then send it with
 *   `Repr-Digest`), `known` (send with the digest this server computed when it stored that path),
 *   `stream` (hash while sending: no header possible, context only).
 */
import { closeSync, fsyncSync, openSync, readSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

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
export function serveBare(): Bun.Server<undefined> {
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
		fetch: mcp,
	});
}

if (import.meta.main) process.stdout.write(`${serveBare().port}\n`);
