/** The `tools/list` answer of either era, serialized once per catalog. */
import type { McpTool } from "./types.ts";

const utf8 = new TextEncoder();

/**
 * The catalog is about 55 KB of JSON: it is serialized and encoded again only when `listTools` hands out a
 * new list. `extra` holds the era's members beside `tools` (2026-07-28: its cache hints and `_meta`).
 */
export function toolsListMemo(
	listTools: () => readonly McpTool[],
	extra: Readonly<Record<string, unknown>> = {},
): () => Uint8Array {
	let memo: { list: readonly McpTool[]; json: Uint8Array } | null = null;
	return () => {
		const list = listTools();
		if (memo?.list !== list) memo = { list, json: utf8.encode(JSON.stringify({ tools: list, ...extra })) };
		return memo.json;
	};
}
