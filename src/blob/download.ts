/** `GET`/`HEAD /blob`: a regular file streamed back whole or by one byte range. */
import { closeSync, openSync, type Stats } from "node:fs";
import { type Ctx, osReason, statOrNull } from "./context.ts";
import { parseRange } from "./parse.ts";

export function download(req: Request, path: string, { note, refuse }: Ctx): Response {
	let st: Stats | null;
	try {
		st = statOrNull(path);
		// Opened once up front so that a permission error is a clear 500, not a cut-off stream.
		if (st?.isFile()) closeSync(openSync(path, "r"));
	} catch (err) {
		return refuse(path, null, "read_failed", `cannot read ${path}: ${osReason(err)}`);
	}
	if (st === null) return refuse(path, null, "not_found", `${path} does not exist`);
	if (st.isDirectory()) return refuse(path, null, "is_directory", `${path} is a directory`);
	if (!st.isFile()) return refuse(path, null, "not_a_file", `${path} is not a regular file`);
	const size = st.size;
	const range = parseRange(req.headers.get("range"), size);
	if (!range.ok) return refuse(path, null, range.code, range.message, { "content-range": `bytes */${size}` });
	const { start, end } = range.value ?? { start: 0, end: size - 1 };
	const length = end - start + 1;
	const headers: Record<string, string> = {
		"content-type": "application/octet-stream",
		"content-length": String(length),
		"accept-ranges": "bytes",
	};
	if (range.value) headers["content-range"] = `bytes ${start}-${end}/${size}`;
	note(path, start, req.method === "HEAD" ? 0 : length);
	// Slicing pins the length to the size seen above even if the file grows while it streams.
	const body = req.method === "HEAD" ? null : Bun.file(path).slice(start, end + 1, "application/octet-stream");
	return new Response(body, { status: range.value ? 206 : 200, headers });
}
