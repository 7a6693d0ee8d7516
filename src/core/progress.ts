/**
 * SSE response for a tools/call that asked for progress (contract §6.4). Invariants: `progress`
 * strictly increases; at most one notification per `minIntervalMs` with the latest text always
 * delivered; while the tool prints nothing, a heartbeat notification (elapsed time) every
 * `heartbeatMs` keeps client timers alive and a `: keepalive` comment every `keepaliveMs` keeps
 * the connection alive; nothing is written after the final message. A client that stops reading
 * holds at most SSE_QUEUE_MAX_BYTES in the stream's queue: progress beyond it waits (latest only),
 * heartbeats and keep-alives beyond it are dropped; the final message always goes in.
 */

import type { SseTimings } from "./types.ts";

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

export interface SseCall {
	response: Response;
	/** The output so far (cumulative); sent as a throttled progress notification. */
	progress(text: string): void;
	/** The host stopped forwarding output: switch to elapsed-time heartbeats. */
	backgrounded(): void;
	/** Sends the final message (or nothing, for a cancelled call) and ends the stream. */
	finish(final: unknown | null): Promise<void>;
}

export function openSseCall(progressToken: ProgressToken, timings: SseTimings = {}): SseCall {
	const minInterval = timings.minIntervalMs ?? PROGRESS_MIN_INTERVAL_MS;
	const keepaliveMs = timings.keepaliveMs ?? KEEPALIVE_MS;
	const heartbeatMs = timings.heartbeatMs ?? HEARTBEAT_MS;
	const now = timings.now ?? Date.now;
	const started = now();
	const encoder = new TextEncoder();
	let controller: ReadableStreamDefaultController<Uint8Array> | null = null;
	let done = false;
	let counter = 0;
	let lastSent = 0;
	let pending: string | null = null;
	let flushTimer: ReturnType<typeof setTimeout> | null = null;
	let backgrounded = false;
	let lastOutput = started;
	let lastBeat = started;
	let lastKeepalive = started;
	/** A write found no room: nothing optional goes in until the client has read half the bound. */
	let full = false;
	const blocked = (): boolean => full && (controller?.desiredSize ?? 0) < SSE_QUEUE_MAX_BYTES / 2;

	/**
	 * Enqueues `chunk`; unless `always`, only while the unread queue stays within the bound, or onto
	 * an empty queue (one event larger than the bound: a huge progress token).
	 */
	const write = (chunk: string, always = false): boolean => {
		if (done || controller === null || (!always && blocked())) return false;
		full = false;
		const room = controller.desiredSize ?? 0;
		const bytes = encoder.encode(chunk);
		if (!always && room < bytes.byteLength && room < SSE_QUEUE_MAX_BYTES) {
			full = true;
			return false;
		}
		try {
			controller.enqueue(bytes);
		} catch {
			// The client went away: the call still finishes and is audited, only the stream is gone.
		}
		return true;
	};
	const event = (message: unknown, always = false): boolean => write(`data: ${JSON.stringify(message)}\n\n`, always);
	const notify = (message: string, always = false): boolean => {
		const sent = event(
			{
				jsonrpc: "2.0",
				method: "notifications/progress",
				params: { progressToken, progress: counter + 1, message },
			},
			always,
		);
		if (sent) {
			counter++;
			lastSent = now();
		}
		return sent;
	};
	/** Sends the latest output; when the queue is full it stays pending (retried by `schedule`). */
	const flush = (always = false): void => {
		flushTimer = null;
		if (pending === null) return;
		const text = pending;
		pending = null;
		if (!notify(tailBytes(text), always)) pending = text;
	};
	/** Sends pending output now, or when the interval since the last notification has passed. */
	const schedule = (): void => {
		if (pending === null || flushTimer !== null || blocked()) return;
		const wait = lastSent + minInterval - now();
		if (wait <= 0) flush();
		else flushTimer = setTimeout(() => flush(), wait);
	};
	const tick = (): void => {
		// Output that waited for a slow reader goes out once there is room again.
		schedule();
		const t = now();
		if (t - Math.max(lastOutput, lastBeat) >= heartbeatMs) {
			lastBeat = t;
			const secs = Math.round((t - started) / 1000);
			notify(
				backgrounded
					? `still running after ${secs} s (the host backgrounded the command; its output comes with the result)`
					: `still running after ${secs} s`,
			);
		}
		if (t - Math.max(lastOutput, lastKeepalive) >= keepaliveMs) {
			lastKeepalive = t;
			write(": keepalive\n\n");
		}
	};
	const ticker = setInterval(tick, Math.max(10, Math.min(1000, heartbeatMs / 5, keepaliveMs / 5)));

	const stream = new ReadableStream<Uint8Array>(
		{
			start(c) {
				controller = c;
			},
			cancel() {
				controller = null;
			},
		},
		new ByteLengthQueuingStrategy({ highWaterMark: SSE_QUEUE_MAX_BYTES }),
	);
	// Open the stream with a comment so proxies and clients see headers and a first byte at once.
	write(": stream open\n\n", true);

	return {
		response: new Response(stream, {
			status: 200,
			headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" },
		}),
		progress(text) {
			if (done || backgrounded) return;
			lastOutput = now();
			pending = text;
			schedule();
		},
		backgrounded() {
			backgrounded = true;
		},
		async finish(final) {
			if (done) return;
			if (pending !== null && final !== null) {
				const wait = lastSent + minInterval - now();
				if (wait > 0) await new Promise(r => setTimeout(r, wait));
				flush(true);
			}
			if (final !== null) event(final, true);
			done = true;
			if (flushTimer) clearTimeout(flushTimer);
			clearInterval(ticker);
			try {
				controller?.close();
			} catch {}
		},
	};
}
