/**
 * Boots the pinned omp (node_modules) in rpc mode in a throwaway HOME with the bridge loaded, per
 * host facts §11: placeholder model, config written first, stdin kept open, stopped by closing
 * stdin then SIGTERM to its own PID.
 */

import { afterAll, beforeAll } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as netConnect } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Subprocess, spawn } from "bun";
import { machineIdFile, readBoxTag } from "../../src/host/box-tag.ts";
import { entryName } from "../../src/host/commands.ts";

export const ROOT = resolve(import.meta.dir, "..", "..");
/** The host under test: the pinned omp, or another build's cli.js named by `A2A_TEST_OMP` (CI's second host). */
export const OMP =
	process.env.A2A_TEST_OMP || join(ROOT, "node_modules", "@oh-my-pi", "pi-coding-agent", "dist", "cli.js");
export const BUN = process.execPath;
const ENTRY = join(ROOT, "extensions", "a2a-bridge.ts");

/** The entry name a host on this machine prints for `port` when its config sets no `name`. */
export const defaultEntryName = (port: number): string =>
	entryName(undefined, hostname(), port, readBoxTag(machineIdFile({})));

export const PLACEHOLDER_MODELS = `providers:
  placeholder:
    baseUrl: http://127.0.0.1:1/v1
    api: anthropic-messages
    apiKey: not-a-real-key
    models:
      - id: placeholder/small
        contextWindow: 100000
`;

export interface HostOptions {
	/** Bridge config object; port and token are filled in when absent. Pass a string for raw file text. */
	config?: Record<string, unknown> | string | null;
	args?: string[];
	env?: Record<string, string>;
	models?: string;
	files?: Record<string, string>;
	/** Wait for the port to open (false for tests that expect the bridge to refuse to start). */
	waitForPort?: boolean;
	/** Load the bridge (default true); false boots a plain omp, e.g. as a remote caller. */
	bridge?: boolean;
}

export interface RpcFrame {
	type: string;
	[key: string]: unknown;
}

/**
 * Below the kernel's ephemeral range: no outgoing connection or listen(0) of a test file running
 * beside this one can take the port between this check and the host's own bind.
 */
function quietPorts(): [number, number] | null {
	try {
		const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
		return low > 21_000 ? [20_000, low - 1] : null;
	} catch {
		return null;
	}
}

function bindable(port: number): Promise<number> {
	return new Promise((res, rej) => {
		const srv = createServer();
		srv.unref();
		srv.on("error", rej);
		srv.listen(port, "127.0.0.1", () => {
			const addr = srv.address();
			const bound = typeof addr === "object" && addr ? addr.port : 0;
			srv.close(() => res(bound));
		});
	});
}

/** A port free right now; random within the quiet range, so parallel files rarely pick the same one. */
export async function freePort(): Promise<number> {
	const range = quietPorts();
	for (let i = 0; range && i < 50; i++) {
		const port = range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1));
		const ok = await bindable(port).catch(() => 0);
		if (ok) return ok;
	}
	return bindable(0);
}

export async function canConnect(port: number, host = "127.0.0.1"): Promise<boolean> {
	try {
		const sock = await Bun.connect({ hostname: host, port, socket: { data() {}, error() {} } });
		sock.end();
		return true;
	} catch {
		return false;
	}
}

export class Host {
	readonly home: string;
	readonly cwd: string;
	readonly port: number;
	readonly token: string;
	readonly url: string;
	readonly configPath: string;
	readonly auditPath: string;
	readonly frames: RpcFrame[] = [];
	stderr = "";
	proc!: Subprocess<"pipe", "pipe", "pipe">;
	#waiters: Array<{ pred: (f: RpcFrame) => boolean; resolve: (f: RpcFrame) => void }> = [];

	constructor(home: string, port: number, token: string) {
		this.home = home;
		this.cwd = join(home, "work");
		this.port = port;
		this.token = token;
		this.url = `http://127.0.0.1:${port}/`;
		this.configPath = join(home, ".omp", "agent", "a2a-bridge.json");
		this.auditPath = join(home, ".omp", "agent", "a2a-bridge.log");
	}

	static async start(opts: HostOptions = {}): Promise<Host> {
		const home = mkdtempSync(join(tmpdir(), "a2a-host-"));
		const agentDir = join(home, ".omp", "agent");
		mkdirSync(agentDir, { recursive: true });
		mkdirSync(join(home, "work"), { recursive: true });
		// A mistaken import must never make Bun fetch packages at run time.
		writeFileSync(join(home, "work", "bunfig.toml"), '[install]\nauto = "disable"\n');
		writeFileSync(join(agentDir, "models.yml"), opts.models ?? PLACEHOLDER_MODELS);
		let port = 0;
		let token = "";
		if (typeof opts.config === "string") {
			writeFileSync(join(agentDir, "a2a-bridge.json"), opts.config, { mode: 0o600 });
		} else if (opts.config !== null) {
			port = typeof opts.config?.port === "number" ? opts.config.port : await freePort();
			token = typeof opts.config?.token === "string" ? opts.config.token : crypto.randomUUID() + crypto.randomUUID();
			const cfg = { host: "127.0.0.1", ...opts.config, port, token };
			writeFileSync(join(agentDir, "a2a-bridge.json"), JSON.stringify(cfg, null, "\t"), { mode: 0o600 });
		}
		for (const [rel, text] of Object.entries(opts.files ?? {})) {
			const p = join(home, rel);
			mkdirSync(join(p, ".."), { recursive: true });
			writeFileSync(p, text);
		}
		const host = new Host(home, port, token);
		const env: Record<string, string> = {
			PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
			HOME: home,
			TMPDIR: process.env.TMPDIR ?? "/tmp",
			LANG: "C.UTF-8",
			// "{HOME}" in a value stands for the throwaway HOME, unknown until now.
			...Object.fromEntries(Object.entries(opts.env ?? {}).map(([k, v]) => [k, v.replaceAll("{HOME}", home)])),
		};
		host.proc = spawn({
			cmd: [
				BUN,
				OMP,
				"--mode",
				"rpc",
				"--no-session",
				...(opts.bridge === false ? [] : ["-e", ENTRY]),
				...(opts.args ?? []),
			],
			cwd: host.cwd,
			env,
			stdin: "pipe",
			stdout: "pipe",
			stderr: "pipe",
		});
		host.#pump();
		if (opts.waitForPort !== false && opts.bridge !== false && port !== 0) await host.waitForPort();
		return host;
	}

	#pump(): void {
		const decoder = new TextDecoder();
		(async () => {
			let buf = "";
			for await (const chunk of this.proc.stdout) {
				buf += decoder.decode(chunk, { stream: true });
				for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
					const line = buf.slice(0, nl).trim();
					buf = buf.slice(nl + 1);
					if (!line) continue;
					let frame: RpcFrame;
					try {
						frame = JSON.parse(line);
					} catch {
						frame = { type: "non_json_stdout", line };
					}
					this.frames.push(frame);
					this.#waiters = this.#waiters.filter(w => {
						if (!w.pred(frame)) return true;
						w.resolve(frame);
						return false;
					});
				}
			}
		})().catch(() => {});
		(async () => {
			for await (const chunk of this.proc.stderr) this.stderr += decoder.decode(chunk, { stream: true });
		})().catch(() => {});
	}

	/** Resolves with the first frame (already seen or future) that matches. */
	waitFrame(pred: (f: RpcFrame) => boolean, timeoutMs = 20_000): Promise<RpcFrame> {
		const seen = this.frames.find(pred);
		if (seen) return Promise.resolve(seen);
		return new Promise((resolve, reject) => {
			const t = setTimeout(() => reject(new Error(`no matching rpc frame within ${timeoutMs} ms`)), timeoutMs);
			this.#waiters.push({
				pred,
				resolve: f => {
					clearTimeout(t);
					resolve(f);
				},
			});
		});
	}

	notifications(): string[] {
		return this.frames
			.filter(f => f.type === "extension_ui_request" && f.method === "notify")
			.map(f => String(f.message));
	}

	send(frame: Record<string, unknown>): void {
		this.proc.stdin.write(`${JSON.stringify(frame)}\n`);
		this.proc.stdin.flush();
	}

	/** 60 s: a host opens its port in 1-2 s, but a 2-core machine shared with other suites can take 30. */
	async waitForPort(port = this.port, timeoutMs = 60_000): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			if (await canConnect(port)) return;
			if (this.proc.exitCode !== null) throw new Error(`host exited (${this.proc.exitCode}): ${this.stderr}`);
			await Bun.sleep(50);
		}
		throw new Error(`bridge port ${port} not open within ${timeoutMs} ms; stderr: ${this.stderr}`);
	}

	/**
	 * A round trip on the rpc pipe (`get_state`): once it is answered, every frame the host wrote
	 * before reading it is in `frames`. Waits for the host instead of for a guessed time.
	 */
	async barrier(timeoutMs = 20_000): Promise<void> {
		const id = `barrier-${crypto.randomUUID()}`;
		this.send({ id, type: "get_state" });
		await this.waitFrame(f => f.id === id, timeoutMs);
	}

	/** Runs a slash command over rpc and resolves once the host says it finished. */
	async command(text: string, timeoutMs = 20_000): Promise<void> {
		const id = crypto.randomUUID();
		const before = this.frames.length;
		this.send({ type: "prompt", id, message: text });
		await this.waitFrame(f => f.type === "prompt_result" && this.frames.indexOf(f) >= before, timeoutMs);
	}

	headers(extra: Record<string, string> = {}): Record<string, string> {
		return { authorization: `Bearer ${this.token}`, "content-type": "application/json", ...extra };
	}

	async stop(): Promise<number | null> {
		if (this.proc.exitCode === null) {
			try {
				this.proc.stdin.end();
			} catch {}
			const exited = await Promise.race([this.proc.exited, Bun.sleep(5000).then(() => null)]);
			if (exited === null) {
				this.proc.kill("SIGTERM");
				await Promise.race([this.proc.exited, Bun.sleep(3000)]);
				if (this.proc.exitCode === null) this.proc.kill("SIGKILL");
			}
		}
		await this.proc.exited;
		return this.proc.exitCode;
	}

	cleanup(): void {
		rmSync(this.home, { recursive: true, force: true });
	}
}

/** A raw JSON-RPC POST helper. */
export async function rpcPost(
	host: Host,
	body: unknown,
	headers: Record<string, string> = {},
	path = "/",
): Promise<Response> {
	return fetch(new URL(path, host.url), {
		method: "POST",
		headers: host.headers(headers),
		body: typeof body === "string" ? body : JSON.stringify(body),
	});
}

/** The status of a 2025 `initialize` at `url` with `bearer` (200 accepted, 401 refused); the body is dropped. */
export async function initializeStatus(url: string, bearer: string, client = "test"): Promise<number> {
	const res = await fetch(url, {
		method: "POST",
		headers: {
			authorization: `Bearer ${bearer}`,
			"content-type": "application/json",
			accept: "application/json, text/event-stream",
		},
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 1,
			method: "initialize",
			params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: client, version: "1" } },
		}),
		signal: AbortSignal.timeout(10_000),
	});
	await res.body?.cancel();
	return res.status;
}

/** initialize → returns the session id. */
/** A 2025 session; `as` opens it with another token's secret and client name (the owner's, "test" by default). */
export async function openSession(
	host: Host,
	version = "2025-11-25",
	as: { secret?: string; client?: string } = {},
): Promise<string> {
	const res = await rpcPost(
		host,
		{
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: version, capabilities: {}, clientInfo: { name: as.client ?? "test", version: "0" } },
		},
		as.secret === undefined ? {} : { authorization: `Bearer ${as.secret}` },
	);
	const sid = res.headers.get("mcp-session-id");
	if (res.status !== 200 || !sid) throw new Error(`initialize failed: ${res.status} ${await res.text()}`);
	await res.text();
	return sid;
}

export async function callTool(
	host: Host,
	sid: string,
	name: string,
	args: Record<string, unknown>,
	id: number | string = 1,
): Promise<{ status: number; body: Record<string, unknown> }> {
	const res = await rpcPost(
		host,
		{ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
		{ "mcp-session-id": sid },
	);
	return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * One HTTP/1.1 request over a fresh TCP connection (Connection: close), outside fetch's connection
 * pool: needed when a test holds hundreds of requests open, and to send bytes fetch would not.
 */
export function rawHttp(
	port: number,
	method: string,
	path: string,
	headers: Record<string, string>,
	body = "",
): Promise<string> {
	return new Promise((resolve, reject) => {
		const sock = netConnect(port, "127.0.0.1");
		let out = "";
		sock.on("data", d => {
			out += d.toString("utf8");
		});
		sock.on("error", reject);
		sock.on("close", () => resolve(out));
		const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close"];
		for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
		lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
		sock.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
	});
}

/** Boots a host for `fn` and always stops and removes it afterwards. */
export async function withHost<T>(opts: HostOptions, fn: (host: Host) => Promise<T>): Promise<T> {
	const host = await Host.start(opts);
	try {
		return await fn(host);
	} finally {
		await host.stop();
		host.cleanup();
	}
}

/**
 * The same, handed to `bind` once booted (with an open MCP session when `session` is set), so a
 * describe keeps plain `host`/`sid` variables: `useSharedHost({ session: true }, h => ({ host, sid } = h))`.
 */
export function useSharedHost(
	opts: HostOptions & { session?: boolean },
	bind: (h: { host: Host; sid: string }) => void,
): void {
	const { session, ...hostOpts } = opts;
	let current: Host | undefined;
	beforeAll(async () => {
		current = await Host.start(hostOpts);
		bind({ host: current, sid: session ? await openSession(current) : "" });
	}, 90_000);
	afterAll(async () => {
		await current?.stop();
		current?.cleanup();
	});
}
