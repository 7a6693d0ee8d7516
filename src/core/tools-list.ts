/** The `tools/list` answer of either era, serialized once per catalog. */
import { type RpcId, rpcAnswerBytes } from "./errors.ts";
import type { McpTool } from "./types.ts";

const utf8 = new TextEncoder();
const CLOSE_BRACE = 0x7d;
/** Room for longer ids than the one the buffer was first sized for. */
const HEAD_ROOM = 256;

/**
 * The catalog (about 55 KB of JSON) is encoded again only when `listTools` hands out a new list; each answer is built
 * in one buffer kept for the next, as Bun copies a body (a fresh one cost the omp host ~0.1 ms in page faults, run 12
 * in docs/performance.md). `extra`: the era's members beside `tools` (2026-07-28: its cache hints and `_meta`).
 */
export function toolsListMemo(
	listTools: () => readonly McpTool[],
	extra: Readonly<Record<string, unknown>> = {},
): (id: RpcId) => Response {
	let memo: { list: readonly McpTool[]; json: Uint8Array } | null = null;
	let scratch = new Uint8Array(0);
	return id => {
		const list = listTools();
		if (memo?.list !== list) memo = { list, json: utf8.encode(JSON.stringify({ tools: list, ...extra })) };
		const head = utf8.encode(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`);
		const size = head.length + memo.json.length + 1;
		if (scratch.length < size) scratch = new Uint8Array(size + HEAD_ROOM);
		scratch.set(head);
		scratch.set(memo.json, head.length);
		scratch[size - 1] = CLOSE_BRACE;
		return rpcAnswerBytes(scratch.subarray(0, size));
	};
}
