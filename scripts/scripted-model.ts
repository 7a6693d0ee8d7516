/**
 * A scripted Anthropic-messages endpoint on loopback: counts requests and answers each with a
 * reply taken from `script` (text, or a tool_use), so a real omp can run a turn without credentials.
 * Used by the end-to-end tests and by `npm run demo`.
 */

export type Reply = { text: string } | { tool: string; input: Record<string, unknown> };

export interface FakeModel {
	url: string;
	requests: Array<Record<string, unknown>>;
	stop(): void;
}

function sse(events: Array<[string, Record<string, unknown>]>): string {
	return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

function replyEvents(reply: Reply, n: number): string {
	const message = {
		id: `msg_${n}`,
		type: "message",
		role: "assistant",
		model: "placeholder",
		content: [],
		stop_reason: null,
		stop_sequence: null,
		usage: { input_tokens: 1, output_tokens: 1 },
	};
	const block =
		"text" in reply ? { type: "text", text: "" } : { type: "tool_use", id: `toolu_${n}`, name: reply.tool, input: {} };
	const delta =
		"text" in reply
			? { type: "text_delta", text: reply.text }
			: { type: "input_json_delta", partial_json: JSON.stringify(reply.input) };
	return sse([
		["message_start", { type: "message_start", message }],
		["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
		["content_block_delta", { type: "content_block_delta", index: 0, delta }],
		["content_block_stop", { type: "content_block_stop", index: 0 }],
		[
			"message_delta",
			{
				type: "message_delta",
				delta: { stop_reason: "text" in reply ? "end_turn" : "tool_use", stop_sequence: null },
				usage: { output_tokens: 1 },
			},
		],
		["message_stop", { type: "message_stop" }],
	]);
}

/** Replies are consumed in order; once the script runs out every request gets `fallback`. */
export function startFakeModel(
	script: Reply[] = [],
	fallback: Reply = { text: "done" },
	onRequest?: (body: Record<string, unknown>, reply: Reply) => void,
): FakeModel {
	const requests: Array<Record<string, unknown>> = [];
	const server = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		async fetch(req) {
			let body: Record<string, unknown> = {};
			try {
				body = (await req.json()) as Record<string, unknown>;
			} catch {}
			requests.push(body);
			const reply = script.shift() ?? fallback;
			onRequest?.(body, reply);
			return new Response(replyEvents(reply, requests.length), {
				headers: { "content-type": "text/event-stream" },
			});
		},
	});
	return { url: `http://127.0.0.1:${server.port}/v1`, requests, stop: () => server.stop(true) };
}

/** A models.yml with one provider whose one model is served at `baseUrl`. */
export function modelsYml(baseUrl: string, provider = "placeholder", model = "placeholder/small"): string {
	return `providers:
  ${provider}:
    baseUrl: ${baseUrl}
    api: anthropic-messages
    apiKey: not-a-real-key
    models:
      - id: ${model}
        contextWindow: 100000
`;
}
