/**
 * Binding and the process-wide endpoint. Invariants: one endpoint per process (concurrent starts
 * share one bind); a stop that lands during the bind releases what the bind produced; release is
 * graceful (no new connections, requests in flight finish); a busy non-zero port falls back once
 * to a random port.
 */
import { connectionOf, IDLE_TIMEOUT_S } from "./idle.ts";
import type { Connection } from "./types.ts";

export interface Binding {
	port: number;
	/** Stops accepting connections and resolves once requests in flight have finished. */
	stop(): Promise<void>;
}

export interface BindResult<B extends Binding> {
	binding: B;
	/** The configured port when it was busy and a random one was taken instead. */
	fallbackFrom?: number;
}

const isAddrInUse = (err: unknown): boolean => {
	const e = err as { code?: string; message?: string } | null;
	return e?.code === "EADDRINUSE" || /EADDRINUSE|address already in use|port \d+ in use/i.test(e?.message ?? "");
};

/**
 * Serves `handle` on host:port with Bun, each request with its connection handle; takes a random
 * port once if the configured one is busy.
 */
export function bindBun(
	handle: (req: Request, conn: Connection) => Promise<Response>,
	host: string,
	port: number,
	idleS = IDLE_TIMEOUT_S,
): BindResult<Binding & { server: Bun.Server<undefined> }> {
	const serve = (p: number) => {
		const server = Bun.serve({
			hostname: host,
			port: p,
			// Uploads to /blob are disk-bound; the MCP route enforces its own 4 MiB limit by counting.
			maxRequestBodySize: Number.MAX_SAFE_INTEGER,
			// Everything closes after this much idleness; tool calls and transfers hold it off (core/idle.ts).
			idleTimeout: idleS,
			fetch(req, srv) {
				return handle(req, connectionOf(req, srv, idleS));
			},
		});
		return {
			server,
			port: server.port ?? p,
			stop: async () => {
				await server.stop(false);
			},
		};
	};
	try {
		return { binding: serve(port) };
	} catch (err) {
		if (port === 0 || !isAddrInUse(err)) throw err;
		return { binding: serve(0), fallbackFrom: port };
	}
}

/**
 * A graceful stop with a deadline: requests in flight get `graceMs` to finish, then `cancelAll` ends the
 * rest (each call still gets its answer and done record) before the binding is gone.
 */
export async function stopWithin(binding: Binding, graceMs: number, cancelAll: () => void): Promise<void> {
	const graceful = binding.stop();
	const drained = await Promise.race([graceful.then(() => true), Bun.sleep(graceMs).then(() => false)]);
	if (drained) return;
	cancelAll();
	await graceful;
}

export class Endpoint<R extends { binding: Binding }> {
	#running: R | null = null;
	#starting: Promise<R | null> | null = null;
	#stopRequested = false;

	get running(): R | null {
		return this.#running;
	}

	/** Starts once; concurrent callers share the same attempt. Errors propagate to every caller. */
	start(open: () => Promise<R>): Promise<R | null> {
		if (this.#running) return Promise.resolve(this.#running);
		if (this.#starting) return this.#starting;
		this.#stopRequested = false;
		const attempt = (async () => {
			try {
				const r = await open();
				if (this.#stopRequested) {
					await r.binding.stop();
					return null;
				}
				this.#running = r;
				return r;
			} finally {
				this.#starting = null;
			}
		})();
		this.#starting = attempt;
		return attempt;
	}

	/** Releases the endpoint, or makes a start in progress release what it bound. */
	async stop(): Promise<void> {
		if (this.#starting) {
			this.#stopRequested = true;
			await this.#starting.catch(() => null);
		}
		const r = this.#running;
		this.#running = null;
		if (r) await r.binding.stop();
	}
}
