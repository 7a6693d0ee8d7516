/**
 * Git's smart HTTP on loopback: a Bun.serve that runs `git http-backend` as a CGI per request, serving
 * every bare repository under `root`. Enough for `git clone` and `bun install git+http://…`.
 */
import { spawn } from "bun";

export interface GitHttp {
	url: string;
	/** Request lines (`GET /path?query`), to prove the clone really went through this server. */
	requests: string[];
	stop(): void;
}

function splitCgi(out: Uint8Array): { status: number; headers: Headers; body: Uint8Array } {
	let end = -1;
	for (let i = 0; i + 3 < out.length; i++) {
		if (out[i] === 13 && out[i + 1] === 10 && out[i + 2] === 13 && out[i + 3] === 10) {
			end = i;
			break;
		}
	}
	if (end < 0) return { status: 502, headers: new Headers(), body: out };
	const headers = new Headers();
	let status = 200;
	for (const line of new TextDecoder().decode(out.subarray(0, end)).split("\r\n")) {
		const colon = line.indexOf(":");
		const name = line.slice(0, colon).trim();
		const value = line.slice(colon + 1).trim();
		if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
		else headers.append(name, value);
	}
	return { status, headers, body: out.subarray(end + 4) };
}

export function serveGit(root: string): GitHttp {
	const requests: string[] = [];
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		async fetch(req) {
			const url = new URL(req.url);
			requests.push(`${req.method} ${url.pathname}${url.search}`);
			const body = req.method === "POST" ? new Uint8Array(await req.arrayBuffer()) : new Uint8Array();
			const env: Record<string, string> = {
				PATH: process.env.PATH ?? "",
				GIT_PROJECT_ROOT: root,
				GIT_HTTP_EXPORT_ALL: "1",
				REQUEST_METHOD: req.method,
				PATH_INFO: decodeURIComponent(url.pathname),
				QUERY_STRING: url.search.slice(1),
				CONTENT_TYPE: req.headers.get("content-type") ?? "",
				CONTENT_LENGTH: String(body.length),
				REMOTE_ADDR: "127.0.0.1",
			};
			// Protocol v2 and gzip-compressed request bodies are announced in headers the CGI must see.
			const protocol = req.headers.get("git-protocol");
			if (protocol) env.GIT_PROTOCOL = protocol;
			const encoding = req.headers.get("content-encoding");
			if (encoding) env.HTTP_CONTENT_ENCODING = encoding;
			const proc = spawn(["git", "http-backend"], { env, stdin: body, stdout: "pipe", stderr: "ignore" });
			const out = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
			await proc.exited;
			const { status, headers, body: payload } = splitCgi(out);
			return new Response(payload, { status, headers });
		},
	});
	return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}
