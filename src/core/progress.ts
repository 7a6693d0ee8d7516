/**
 * SSE response for a tools/call that asked for progress (contract §6.4). Invariants: `progress`
 * strictly increases; at most one notification per `minIntervalMs` with the latest text always
 * delivered; while the tool prints nothing, a heartbeat notification (elapsed time) every
 * `heartbeatMs` keeps client timers alive and a `: keepalive` comment every `keepaliveMs` keeps
 * the connection alive; nothing is written after the final message. A client that stops reading
 * holds at most SSE_QUEUE_MAX_BYTES in the stream's queue: progress beyond it waits (latest only),
 * heartbeats and keep-alives beyond it are dropped; the final message always goes in.
 */

import { SYSTEM_CLOCK } from "./clock.ts";
import type { Clock, SseTimings } from "./types.ts";

export type { SseTimings } from "./types.ts";

/** The pacing of progress notifications; the testing knob may shorten it (src/config/knobs.ts). */
export const PROGRESS_MIN_INTERVAL_MS = 250;
const KEEPALIVE_MS = 15_000;
const HEARTBEAT_MS = 5_000;
const PROGRESS_MESSAGE_MAX_BYTES = 1024;
/** Bytes a stream may hold unread before progress waits; a reading client never gets near it. @internal */
export const SSE_QUEUE_MAX_BYTES = 64 * 1024;

export type ProgressToken = string | number;

/** The last `maxBytes` bytes of `text`, cut at a character boundary. @internal */
export function tailBytes(text: string, maxBytes = PROGRESS_MESSAGE_MAX_BYTES): string {
	if (Buffer.byteLength(text) <= maxBytes) return text;
	let tail = text.slice(-maxBytes);
	while (Buffer.byteLength(tail) > maxBytes) tail = tail.slice(1);
	return tail;
}

/** True when the Accept header lists text/event-stream (by membership, any order, any params). */
export function acceptsEventStream(accept: string | null): boolean {
	if (accept === null) return false;
	return accept.split(",").some(part => {
		const type = part.split(";")[0]?.trim().toLowerCase();
		return type === "text/event-stream" || type === "*/*" || type === "text/*";
	});
}

/**
 * One call's SSE stream, paced on `clock`: the ticker (heartbeats, keep-alives, output that waited for a
 * slow reader) re-arms itself on the clock until the final message.
 */
export class SseStream {
	readonly response: Response;
	readonly #token: ProgressToken;
	readonly #clock: Clock;
	readonly #minInterval: number;
	readonly #keepaliveMs: number;
	readonly #heartbeatMs: number;
	readonly #tickMs: number;
	readonly #started: number;
	readonly #encoder = new TextEncoder();
	#controller: ReadableStreamDefaultController<Uint8Array> | null = null;
	#done = false;
	#counter = 0;
	#lastSent = 0;
	#pending: string | null = null;
	#cancelFlush: (() => void) | null = null;
	#cancelTick: () => void = () => {};
	#backgrounded = false;
	#lastOutput: number;
	#lastBeat: number;
	#lastKeepalive: number;
	/** A write found no room: nothing optional goes in until the client has read half the bound. */
	#full = false;

	constructor(progressToken: ProgressToken, timings: SseTimings = {}, clock: Clock = SYSTEM_CLOCK) {
		this.#token = progressToken;
		this.#clock = clock;
		this.#minInterval = timings.minIntervalMs ?? PROGRESS_MIN_INTERVAL_MS;
		this.#keepaliveMs = timings.keepaliveMs ?? KEEPALIVE_MS;
		this.#heartbeatMs = timings.heartbeatMs ?? HEARTBEAT_MS;
		this.#tickMs = Math.max(10, Math.min(1000, this.#heartbeatMs / 5, this.#keepaliveMs / 5));
		this.#started = clock.now();
		this.#lastOutput = this.#lastBeat = this.#lastKeepalive = this.#started;
		const stream = new ReadableStream<Uint8Array>(
			{
				start: c => {
					this.#controller = c;
				},
				cancel: () => {
					this.#controller = null;
				},
			},
			new ByteLengthQueuingStrategy({ highWaterMark: SSE_QUEUE_MAX_BYTES }),
		);
		this.response = new Response(stream, {
			status: 200,
			headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" },
		});
		// Open the stream with a comment so proxies and clients see headers and a first byte at once.
		this.#write(": stream open\n\n", true);
		this.#armTicker();
	}

	/** The output so far (cumulative); sent as a throttled progress notification. */
	progress(text: string): void {
		if (this.#done || this.#backgrounded) return;
		this.#lastOutput = this.#clock.now();
		this.#pending = text;
		this.#schedule();
	}

	/** The host stopped forwarding output: switch to elapsed-time heartbeats. */
	backgrounded(): void {
		this.#backgrounded = true;
	}

	/** Sends the final message (or nothing, for a cancelled call) and ends the stream. */
	async finish(final: unknown | null): Promise<void> {
		if (this.#done) return;
		if (this.#pending !== null && final !== null) {
			const wait = this.#lastSent + this.#minInterval - this.#clock.now();
			if (wait > 0) await new Promise<void>(r => this.#clock.after(wait, r));
			this.#flush(true);
		}
		if (final !== null) this.#event(final, true);
		this.#done = true;
		this.#cancelFlush?.();
		this.#cancelTick();
		try {
			this.#controller?.close();
		} catch {}
	}

	#blocked(): boolean {
		return this.#full && (this.#controller?.desiredSize ?? 0) < SSE_QUEUE_MAX_BYTES / 2;
	}

	/**
	 * Enqueues `chunk`; unless `always`, only while the unread queue stays within the bound, or onto
	 * an empty queue (one event larger than the bound: a huge progress token).
	 */
	#write(chunk: string, always = false): boolean {
		const c = this.#controller;
		if (this.#done || c === null || (!always && this.#blocked())) return false;
		this.#full = false;
		const room = c.desiredSize ?? 0;
		const bytes = this.#encoder.encode(chunk);
		if (!always && room < bytes.byteLength && room < SSE_QUEUE_MAX_BYTES) {
			this.#full = true;
			return false;
		}
		try {
			c.enqueue(bytes);
		} catch {
			// The client went away: the call still finishes and is audited, only the stream is gone.
		}
		return true;
	}

	#event(message: unknown, always = false): boolean {
		return this.#write(`data: ${JSON.stringify(message)}\n\n`, always);
	}

	#notify(message: string, always = false): boolean {
		const params = { progressToken: this.#token, progress: this.#counter + 1, message };
		const sent = this.#event({ jsonrpc: "2.0", method: "notifications/progress", params }, always);
		if (sent) {
			this.#counter++;
			this.#lastSent = this.#clock.now();
		}
		return sent;
	}

	/** Sends the latest output; when the queue is full it stays pending (retried by `#schedule`). */
	#flush(always = false): void {
		this.#cancelFlush = null;
		const text = this.#pending;
		if (text === null) return;
		this.#pending = null;
		if (!this.#notify(tailBytes(text), always)) this.#pending = text;
	}

	/** Sends pending output now, or when the interval since the last notification has passed. */
	#schedule(): void {
		if (this.#pending === null || this.#cancelFlush !== null || this.#blocked()) return;
		const wait = this.#lastSent + this.#minInterval - this.#clock.now();
		if (wait <= 0) this.#flush();
		else this.#cancelFlush = this.#clock.after(wait, () => this.#flush());
	}

	#armTicker(): void {
		this.#cancelTick = this.#clock.after(this.#tickMs, () => {
			this.#tick();
			if (!this.#done) this.#armTicker();
		});
	}

	#tick(): void {
		// Output that waited for a slow reader goes out once there is room again.
		this.#schedule();
		const t = this.#clock.now();
		if (t - Math.max(this.#lastOutput, this.#lastBeat) >= this.#heartbeatMs) {
			this.#lastBeat = t;
			const secs = Math.round((t - this.#started) / 1000);
			this.#notify(
				this.#backgrounded
					? `still running after ${secs} s (the host backgrounded the command; its output comes with the result)`
					: `still running after ${secs} s`,
			);
		}
		if (t - Math.max(this.#lastOutput, this.#lastKeepalive) >= this.#keepaliveMs) {
			this.#lastKeepalive = t;
			this.#write(": keepalive\n\n");
		}
	}
}
