/**
 * Scripted stand-ins for the model APIs the agent CLIs speak (Anthropic messages, OpenAI Responses,
 * OpenAI chat completions, Gemini), on loopback. Each turn it looks for the bridge's `bash` among the
 * tools the client offers: the first turn calls it with the scripted command, every later turn (the
 * tool's result is in the conversation) or a request without that tool gets plain text. No key, no
 * login, nothing leaves the machine.
 */

export interface ModelStub {
	/** Base URL without a trailing slash, e.g. `http://127.0.0.1:PORT`. */
	readonly base: string;
	/** Tool names the stub called, in order. */
	readonly called: string[];
	/** The conversation of each request that carried a tool result (JSON), to check what came back. */
	readonly toolResults: string[];
	/** Every request path seen (for failure messages). */
	readonly paths: string[];
	stop(): void;
}

export interface StubOptions {
	/** The shell command the stub asks the bridge's bash to run. */
	command: string;
	/** Picks the bridge's bash tool among the names offered (default: ends with `bash` and names the server). */
	pick?: (names: string[]) => string | undefined;
	/** Extra arguments for the bash call (e.g. a timeout). */
	extraArgs?: Record<string, unknown>;
}

type Body = Record<string, unknown>;

const sse = (events: Array<[string | null, unknown]>): string =>
	events.map(([event, data]) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`).join("");

const str = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? ""));

const defaultPick =
	(server: string) =>
	(names: string[]): string | undefined =>
		names.find(n => n.includes(server) && /bash$/.test(n));

/** Tool names offered, for each API's request shape. */
function toolNames(body: Body): string[] {
	const out: string[] = [];
	const tools = Array.isArray(body.tools) ? body.tools : [];
	for (const t of tools as Body[]) {
		if (typeof t?.name === "string") out.push(t.name); // anthropic, responses
		// Responses API namespaces (Codex groups each MCP server's tools): `namespace/tool`.
		if (t?.type === "namespace" && Array.isArray(t.tools)) {
			for (const c of t.tools as Body[]) if (typeof c?.name === "string") out.push(`${t.name}/${c.name}`);
		}
		const fn = t?.function as Body | undefined;
		if (typeof fn?.name === "string") out.push(fn.name); // chat completions
		const decls = t?.functionDeclarations ?? t?.function_declarations; // gemini
		if (Array.isArray(decls)) for (const d of decls as Body[]) if (typeof d?.name === "string") out.push(d.name);
	}
	return out;
}

/** Whether the conversation already holds a tool result (then the stub answers with text). */
function hasToolResult(body: Body): boolean {
	const text = JSON.stringify(body.messages ?? body.input ?? body.contents ?? []);
	return /"tool_result"|"function_call_output"|"role":"tool"|"functionResponse"/.test(text);
}

function anthropic(body: Body, call: { name: string; input: Body } | null): Response {
	const message = {
		id: "msg_stub",
		type: "message",
		role: "assistant",
		model: str(body.model),
		content: [],
		stop_reason: null,
		stop_sequence: null,
		usage: { input_tokens: 1, output_tokens: 1 },
	};
	const block = call
		? { type: "tool_use", id: `toolu_${crypto.randomUUID().slice(0, 8)}`, name: call.name, input: {} }
		: { type: "text", text: "" };
	const delta = call
		? { type: "input_json_delta", partial_json: JSON.stringify(call.input) }
		: { type: "text_delta", text: "done" };
	const stop = call ? "tool_use" : "end_turn";
	if (body.stream !== true) {
		const content = call ? [{ ...block, input: call.input }] : [{ type: "text", text: "done" }];
		return Response.json({ ...message, content, stop_reason: stop });
	}
	const text = sse([
		["message_start", { type: "message_start", message }],
		["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
		["content_block_delta", { type: "content_block_delta", index: 0, delta }],
		["content_block_stop", { type: "content_block_stop", index: 0 }],
		[
			"message_delta",
			{ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } },
		],
		["message_stop", { type: "message_stop" }],
	]);
	return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

const namespaced = (name: string): Body => {
	const slash = name.indexOf("/");
	return slash < 0 ? { name } : { namespace: name.slice(0, slash), name: name.slice(slash + 1) };
};

function responses(body: Body, call: { name: string; input: Body } | null): Response {
	const id = `resp_${crypto.randomUUID().slice(0, 8)}`;
	const item = call
		? {
				type: "function_call",
				id: `fc_${id}`,
				call_id: `call_${id}`,
				...namespaced(call.name),
				arguments: JSON.stringify(call.input),
				status: "completed",
			}
		: {
				type: "message",
				id: `msg_${id}`,
				role: "assistant",
				status: "completed",
				content: [{ type: "output_text", text: "done", annotations: [] }],
			};
	const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 } };
	const response = { id, object: "response", status: "completed", model: str(body.model), output: [item], usage };
	const text = sse([
		["response.created", { type: "response.created", response: { ...response, status: "in_progress", output: [] } }],
		["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
		["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
		["response.completed", { type: "response.completed", response }],
	]);
	return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

function chat(body: Body, call: { name: string; input: Body } | null): Response {
	const id = `chatcmpl-${crypto.randomUUID().slice(0, 8)}`;
	const base = { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: str(body.model) };
	const delta = call
		? {
				role: "assistant",
				content: null,
				tool_calls: [
					{
						index: 0,
						id: `call_${id}`,
						type: "function",
						function: { name: call.name, arguments: JSON.stringify(call.input) },
					},
				],
			}
		: { role: "assistant", content: "done" };
	const finish = call ? "tool_calls" : "stop";
	if (body.stream !== true) {
		const message = call ? { role: "assistant", content: null, tool_calls: delta.tool_calls } : delta;
		return Response.json({
			...base,
			object: "chat.completion",
			choices: [{ index: 0, message, finish_reason: finish }],
			usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
		});
	}
	const chunks = [
		{ ...base, choices: [{ index: 0, delta, finish_reason: null }] },
		{
			...base,
			choices: [{ index: 0, delta: {}, finish_reason: finish }],
			usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
		},
	];
	const text = `${chunks.map(c => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
	return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

function gemini(url: URL, call: { name: string; input: Body } | null): Response {
	const part = call ? { functionCall: { name: call.name, args: call.input } } : { text: "done" };
	const chunk = {
		candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
		usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
		modelVersion: "stub",
	};
	if (url.pathname.endsWith(":countTokens")) return Response.json({ totalTokens: 1 });
	if (url.pathname.includes(":streamGenerateContent")) {
		return new Response(`data: ${JSON.stringify(chunk)}\r\n\r\n`, { headers: { "content-type": "text/event-stream" } });
	}
	return Response.json(chunk);
}

/** Starts one stub that answers all four API shapes, told apart by path. */
export function startModelStub(opts: StubOptions & { server: string }): ModelStub {
	const called: string[] = [];
	const paths: string[] = [];
	const toolResults: string[] = [];
	const pick = opts.pick ?? defaultPick(opts.server);
	const srv = Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		idleTimeout: 0,
		async fetch(req) {
			const url = new URL(req.url);
			paths.push(`${req.method} ${url.pathname}`);
			if (req.method === "GET" && /\/models\/?$/.test(url.pathname)) {
				return Response.json({ object: "list", data: [{ id: "stub-model", object: "model", owned_by: "stub" }] });
			}
			let body: Body = {};
			try {
				body = (await req.json()) as Body;
			} catch {}
			const done = hasToolResult(body);
			if (done) toolResults.push(JSON.stringify(body.messages ?? body.input ?? body.contents));
			const name = done ? undefined : pick(toolNames(body));
			const call = name ? { name, input: { command: opts.command, ...opts.extraArgs } } : null;
			if (call) called.push(call.name);
			const p = url.pathname;
			if (p.endsWith("/messages")) return anthropic(body, call);
			if (p.endsWith("/responses")) return responses(body, call);
			if (p.endsWith("/chat/completions")) return chat(body, call);
			if (p.includes("/models/")) return gemini(url, call);
			return new Response("not a model route", { status: 404 });
		},
	});
	return { base: `http://127.0.0.1:${srv.port}`, called, paths, toolResults, stop: () => srv.stop(true) };
}
