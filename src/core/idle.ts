/**
 * The connection's idle timer (contract §15). Bun closes a connection after IDLE_TIMEOUT_S without a
 * finished request, before auth too; Bun's timer also runs while a request is pending and does not
 * restart on body bytes, so work that may take long (a tool call, a `/blob` transfer) holds it off
 * for its own duration and re-arms it when done, through the request's `Connection` handle.
 */
import { queuedBytes, resetConnection } from "./tcp-reset.ts";
import type { Connection } from "./types.ts";

/** At most 30 s (contract §15); also Bun's bound for half-sent headers is below it. */
export const IDLE_TIMEOUT_S = 30;

interface Timer {
	timeout(req: Request, seconds: number): void;
	/** Bun answers null once it is done with the request (response sent or connection gone). */
	requestIP(req: Request): { address: string; port: number } | null;
	/** The port the binding listens on (the connection's local port). */
	readonly port?: number | undefined;
}

const noop = (): void => {};

/** For a request no listener saw (unit tests): holding and closing do nothing, `sent` knows nothing. */
export const NO_CONNECTION: Connection = {
	holdOpen: () => noop,
	closeSoon: noop,
	cut: () => false,
	sent: () => null,
	queued: () => null,
};

/** The handle the listener makes for each request it hands to the pipeline. */
export function connectionOf(req: Request, server: Timer, idleS = IDLE_TIMEOUT_S): Connection {
	// Known while the request is live; kept so a response Bun is done with can still be reset or drained.
	let peer: { address: string; port: number } | null = null;
	try {
		peer = server.requestIP(req);
	} catch {
		// Already closed.
	}
	const closeSoon = (): void => {
		try {
			server.timeout(req, 1);
		} catch {
			// Already closed.
		}
	};
	return {
		holdOpen() {
			server.timeout(req, 0);
			let held = true;
			return () => {
				if (!held) return;
				held = false;
				try {
					server.timeout(req, idleS);
				} catch {
					// The connection is already gone.
				}
			};
		},
		closeSoon,
		cut() {
			if (peer !== null && server.port !== undefined && resetConnection(server.port, peer)) return true;
			closeSoon();
			return false;
		},
		queued() {
			return peer === null || server.port === undefined ? null : queuedBytes(server.port, peer);
		},
		sent() {
			try {
				return server.requestIP(req) === null;
			} catch {
				return true;
			}
		},
	};
}
