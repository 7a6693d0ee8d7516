/** A raw HTTP/1.1 `/blob` upload whose body a test feeds (and may abandon) by hand, outside fetch. */
import { connect, type Socket } from "node:net";
import type { Host } from "./host.ts";

/** Sends the request head for `method target` with `Content-Length: contentLength`; the body is the test's. */
export function rawUpload(
	host: Host,
	method: string,
	target: string,
	contentLength: number,
): Promise<{ sock: Socket; reply: Promise<string> }> {
	return new Promise((resolve, reject) => {
		const sock = connect(host.port, "127.0.0.1", () => {
			sock.write(
				`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\n` +
					`Content-Length: ${contentLength}\r\nConnection: close\r\n\r\n`,
			);
			let text = "";
			const reply = new Promise<string>(done => {
				sock.on("data", d => {
					text += d.toString("latin1");
				});
				sock.on("close", () => done(text));
			});
			resolve({ sock, reply });
		});
		sock.on("error", reject);
	});
}

/** Writes `data` and resolves once the socket has taken it. */
export const feed = (sock: Socket, data: Uint8Array): Promise<void> =>
	new Promise((resolve, reject) => sock.write(data, err => (err ? reject(err) : resolve())));
