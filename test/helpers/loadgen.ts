/**
 * Closed-loop load generator for MCP endpoints: `sessions` sessions, each run by one worker that
 * sends `perSession` requests back to back. Run as a subprocess (`bun loadgen.ts '<json>'`) so its
 * sockets close when it exits and never count against the server's file descriptors.
 */

export interface LoadSpec {
	url: string;
	token: string;
	sessions: number;
	/** Requests per session, cycled through `messages`. */
	perSession: number;
	messages: Array<{ method: string; params?: Record<string, unknown> }>;
	/** Skip initialize (a server without sessions, e.g. a bare ceiling server). */
	stateless?: boolean;
	/** Speak MCP 2026-07-28: no session, the `_meta` envelope and routing headers on every request. */
	modern?: boolean;
	/**
	 * Each session alternates its 2025 request and the same as 2026-07-28, request by request, so both eras
	 * meet the same load; `eras` holds each era's figures.
	 */
	alternate?: boolean;
}

const MODERN = "2026-07-28";
const ENVELOPE = {
	"io.modelcontextprotocol/protocolVersion": MODERN,
	"io.modelcontextprotocol/clientCapabilities": {},
	"io.modelcontextprotocol/clientInfo": { name: "loadgen", version: "0" },
};

/** The per-message headers and params of the modern era (the same for every request of a message). */
function modernMessage(msg: LoadSpec["messages"][number]): { headers: Record<string, string>; msg: typeof msg } {
	const name = msg.params?.name;
	return {
		headers: {
			"mcp-protocol-version": MODERN,
			"mcp-method": msg.method,
			...(msg.method === "tools/call" && typeof name === "string" ? { "mcp-name": name } : {}),
		},
		msg: { ...msg, params: { ...msg.params, _meta: ENVELOPE } },
	};
}

/** One era's share of an alternating run; `rps` is sessions / mean latency (a closed loop of that era alone). */
export interface EraFigures {
	requests: number;
	rps: number;
	p50ms: number;
	p99ms: number;
}

export interface LoadResult {
	eras?: { legacy: EraFigures; modern: EraFigures };
	requests: number;
	errors: number;
	firstError?: string;
	seconds: number;
	rps: number;
	p50ms: number;
	p99ms: number;
}

const percentile = (sorted: number[], p: number): number =>
	sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

/** `initialize` with the given headers; resolves the session id the server issued (null if none). */
export async function initialize(url: string, headers: Record<string, string>, client: string): Promise<string | null> {
	const res = await fetch(url, {
		method: "POST",
		headers,
		body: JSON.stringify({
			jsonrpc: "2.0",
			id: 0,
			method: "initialize",
			params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: client, version: "0" } },
		}),
	});
	await res.text();
	return res.headers.get("mcp-session-id");
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
	const base = {
		authorization: `Bearer ${spec.token}`,
		"content-type": "application/json",
		accept: "application/json, text/event-stream",
	};
	const sids: Array<string | null> = [];
	for (let i = 0; i < spec.sessions; i++) {
		if (spec.stateless || spec.modern) {
			sids.push(null);
			continue;
		}
		const sid = await initialize(spec.url, base, "loadgen");
		sids.push(sid);
		if (sid) {
			const n = await fetch(spec.url, {
				method: "POST",
				headers: { ...base, "mcp-session-id": sid },
				body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
			});
			await n.text();
		}
	}
	const latencies: number[] = [];
	const byEra: [number[], number[]] = [[], []];
	let errors = 0;
	let firstError: string | undefined;
	const modern = spec.modern || spec.alternate ? spec.messages.map(modernMessage) : null;
	// Every session opens its connection and warms this process with one untimed request before the clock
	// starts (in parallel, as the timed ones run), whatever its era: one with no effect (`ping`, or
	// `server/discover` in 2026-07-28), since a message under test may start something (`hub start`).
	await Promise.all(
		sids.map(async sid => {
			const modernWarm = { "mcp-protocol-version": MODERN, "mcp-method": "server/discover" };
			const res = await fetch(spec.url, {
				method: "POST",
				headers: spec.modern ? { ...base, ...modernWarm } : sid ? { ...base, "mcp-session-id": sid } : base,
				body: JSON.stringify(
					spec.modern
						? { jsonrpc: "2.0", id: 0, method: "server/discover", params: { _meta: ENVELOPE } }
						: { jsonrpc: "2.0", id: 0, method: "ping" },
				),
			});
			await res.text();
		}),
	);
	// Each message serialized once, the id spliced in per request: a larger 2026-07-28 body (its envelope)
	// costs this client no more per request than a 2025 one, so a comparison of eras measures the server.
	const tails = [spec.messages, modern?.map(m => m.msg) ?? []].map(list => list.map(m => JSON.stringify(m).slice(1)));
	const started = performance.now();
	await Promise.all(
		sids.map(async sid => {
			// Built once per session: fetch would otherwise convert a plain object into headers on every request.
			const session = new Headers(sid ? { ...base, "mcp-session-id": sid } : base);
			const modernHeaders = modern?.map(m => new Headers({ ...base, ...m.headers }));
			for (let i = 0; i < spec.perSession; i++) {
				const era = spec.alternate ? i % 2 : spec.modern ? 1 : 0;
				const k = (spec.alternate ? i >> 1 : i) % spec.messages.length;
				const tail = tails[era]?.[k] ?? '"method":"ping"}';
				const headers = (era === 1 ? modernHeaders?.[k] : undefined) ?? session;
				const t0 = performance.now();
				try {
					const res = await fetch(spec.url, {
						method: "POST",
						headers,
						body: `{"jsonrpc":"2.0","id":${i + 1},${tail}`,
					});
					const text = await res.text();
					const ok = res.status === 200 && !text.includes('"error"') && !text.includes('"isError":true');
					if (!ok) {
						errors++;
						firstError ??= `${res.status} ${text.slice(0, 300)}`;
					}
				} catch (err) {
					errors++;
					firstError ??= String(err);
				}
				const ms = performance.now() - t0;
				latencies.push(ms);
				byEra[era]?.push(ms);
			}
		}),
	);
	const seconds = (performance.now() - started) / 1000;
	latencies.sort((a, b) => a - b);
	const figures = (ms: number[]): EraFigures => {
		ms.sort((a, b) => a - b);
		const mean = ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length);
		const p50ms = percentile(ms, 50);
		return { requests: ms.length, rps: (spec.sessions * 1000) / mean, p50ms, p99ms: percentile(ms, 99) };
	};
	return {
		...(spec.alternate ? { eras: { legacy: figures(byEra[0]), modern: figures(byEra[1]) } } : {}),
		requests: latencies.length,
		errors,
		...(firstError ? { firstError } : {}),
		seconds,
		rps: latencies.length / seconds,
		p50ms: percentile(latencies, 50),
		p99ms: percentile(latencies, 99),
	};
}

/** Runs the generator in a child process and returns its result. */
export async function runLoadInChild(spec: LoadSpec): Promise<LoadResult> {
	const proc = Bun.spawn([process.execPath, import.meta.path, JSON.stringify(spec)], {
		stdout: "pipe",
		stderr: "pipe",
	});
	const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
	await proc.exited;
	if (proc.exitCode !== 0) throw new Error(`load generator failed: ${err}`);
	return JSON.parse(out) as LoadResult;
}

if (import.meta.main) {
	const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
	process.stdout.write(JSON.stringify(await runLoad(spec)));
}
