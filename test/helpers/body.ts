/** A request body the test sends in pieces: `push` enqueues text, `end` closes the stream. */
export function pushableBody(): { body: ReadableStream<Uint8Array>; push(s: string): void; end(): void } {
	let ctl: ReadableStreamDefaultController<Uint8Array> | undefined;
	const body = new ReadableStream<Uint8Array>({
		start(c) {
			ctl = c;
		},
	});
	return { body, push: s => ctl?.enqueue(new TextEncoder().encode(s)), end: () => ctl?.close() };
}
