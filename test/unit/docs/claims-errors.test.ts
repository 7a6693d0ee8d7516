/**
 * The errors page (both languages) held to the error tables.
 * One of the claims tests: each docs claim held to the file that decides it, so the next drift fails here.
 */
import { describe, expect, test } from "bun:test";
import * as blob from "../../../src/blob/parse.ts";
import * as errors from "../../../src/core/errors.ts";
import * as hostLlm from "../../../src/takeover/route.ts";
import { read } from "../../helpers/claims.ts";

describe("the errors page (both languages) = the error tables", () => {
	// A sentence's length as a reader sees it: a Chinese character takes two columns, as in a terminal.
	const columns = (cell: string | undefined): number => Bun.stringWidth(cell ?? "");
	/** The rows of the table right under `heading` in `file`: cells trimmed, backticks dropped. */
	function table(file: string, heading: string): string[][] {
		const text = read(file);
		const at = text.indexOf(`\n${heading}\n`);
		if (at < 0) throw new Error(`${file}: no '${heading}'`);
		const rest = text.slice(at + heading.length + 2);
		const start = rest.indexOf("\n|") + 1;
		return rest
			.slice(start)
			.split("\n\n")[0]
			?.split("\n")
			.slice(2)
			.map(l =>
				l
					.slice(1, -1)
					.split(" | ")
					.map(c => c.trim().replace(/^`|`$/g, "")),
			) as string[][];
	}

	for (const [file, mcp, blobH, llm] of [
		["docs/guide/errors.md", "## MCP errors", "## `/blob` errors", "## `/host-llm` errors"],
		["docs/zh/guide/errors.md", "## MCP 错误", "## `/blob` 错误", "## `/host-llm` 错误"],
	] as const) {
		test(`${file}: every ERRORS row with its status, code and message, each with a cause and a remedy`, () => {
			const rows = table(file, mcp);
			expect(rows.map(r => r[0])).toEqual(Object.keys(errors.ERRORS));
			for (const [kind = "", status, code, message, cause, remedy] of rows) {
				const row = errors.ERRORS[kind as keyof typeof errors.ERRORS];
				expect({ kind, status, code, message }).toEqual({
					kind,
					status: String(row.status),
					code: String(row.code),
					message: row.message,
				});
				expect({ kind, cause: columns(cause) > 10, remedy: columns(remedy) > 3 }).toEqual({
					kind,
					cause: true,
					remedy: true,
				});
			}
		});

		test(`${file}: every /blob and /host-llm code with its status`, () => {
			for (const [heading, codes] of [
				[blobH, blob.BLOB_ERRORS],
				[llm, hostLlm.HOST_LLM_ERRORS],
			] as const) {
				const rows = table(file, heading);
				expect(Object.fromEntries(rows.map(r => [r[0], Number(r[1])]))).toEqual({ ...codes });
				expect(rows.map(r => r[0])).toEqual(Object.keys(codes));
				for (const r of rows) expect(columns(r[2]) > 5 && columns(r[3]) > 3).toBe(true);
			}
		});
	}
});
