/**
 * The catalog: the Main session's tool registry described as MCP tools. Names are read from the
 * registry at every list; descriptions and schemas are reused while the same tool objects stay.
 */
import type { McpTool } from "../core/types.ts";
import { errorText } from "../text/error-text.ts";
import { type HostAccess, type HostTool, TOOL_FAILED } from "./shapes.ts";

const FALLBACK_SCHEMA = { type: "object" } as const;
const LIST_CACHE_MS = 1000;

/** MCP annotations from the host tier for empty arguments; nothing when the tool declares no tier. @internal */
export function annotationsFor(approval: unknown): Record<string, boolean> | undefined {
	let decision: unknown = approval;
	if (typeof approval === "function") {
		try {
			decision = (approval as (args: unknown) => unknown)({});
		} catch {
			return undefined;
		}
	}
	const tier =
		typeof decision === "string" ? decision : ((decision as { tier?: unknown } | null | undefined)?.tier ?? undefined);
	if (tier === "read") return { readOnlyHint: true };
	if (tier === "write") return { readOnlyHint: false, destructiveHint: true };
	if (tier === "exec") return { readOnlyHint: false, destructiveHint: true, openWorldHint: true };
	return undefined;
}

export class Catalog {
	readonly #host: HostAccess;
	readonly #schemas = new WeakMap<object, Record<string, unknown>>();
	#listCache: {
		at: number;
		names: string[];
		tools: Array<HostTool | undefined>;
		params: unknown[];
		list: McpTool[];
	} | null = null;

	constructor(host: HostAccess) {
		this.#host = host;
	}

	/**
	 * The registry's names are read at every call; the host recomputes descriptions on each read
	 * (about 0.5 ms for the built-ins), so the described list is reused for LIST_CACHE_MS while
	 * the same tool objects, with the same parameters, are registered under the same names.
	 */
	list(): McpTool[] {
		const main = this.#host.mainSession();
		if (main === null) return this.#host.fallbackTools().map(t => this.#describe(t, undefined));
		const names = main.getAllToolNames();
		const tools = names.map(name => main.getToolByName(name));
		const now = Date.now();
		const hit = this.#listCache;
		if (
			hit &&
			now - hit.at < LIST_CACHE_MS &&
			hit.names.length === names.length &&
			hit.names.every((n, i) => n === names[i] && hit.tools[i] === tools[i] && hit.params[i] === tools[i]?.parameters)
		) {
			return hit.list;
		}
		const list: McpTool[] = [];
		names.forEach((name, i) => {
			const tool = tools[i];
			if (!tool) return;
			// A tool the host throws on while it is read is left out, said on stderr; the rest is listed.
			try {
				list.push(this.#describe({ ...pick(tool), name }, tool.approval));
			} catch (err) {
				this.#host.log(
					`a2a-bridge: tool '${name}' left out of tools/list: the host threw reading it (${errorText(err, TOOL_FAILED)})`,
				);
			}
		});
		this.#listCache = { at: now, names, tools, params: tools.map(t => t?.parameters), list };
		return list;
	}

	/** The tool's argument names in its schema's order (what an approval prompt lists them by). */
	argumentOrder(name: string, tool: HostTool): string[] {
		const props = this.#schema({ ...pick(tool), name }).properties;
		return typeof props === "object" && props !== null ? Object.keys(props) : [];
	}

	#describe(tool: { name: string; description?: string; parameters?: unknown }, approval: unknown): McpTool {
		const annotations = annotationsFor(approval);
		return {
			name: tool.name,
			description: typeof tool.description === "string" ? tool.description : "",
			inputSchema: this.#schema(tool),
			...(annotations ? { annotations } : {}),
		};
	}

	#schema(tool: { name: string; description?: string; parameters?: unknown }): Record<string, unknown> {
		const key = tool.parameters;
		const cacheable = (typeof key === "object" && key !== null) || typeof key === "function";
		const hit = cacheable ? this.#schemas.get(key as object) : undefined;
		if (hit) return hit;
		let schema: Record<string, unknown>;
		try {
			const s = this.#host.wireSchema(tool);
			schema = s && typeof s === "object" && s.type === "object" ? s : { ...FALLBACK_SCHEMA };
		} catch (err) {
			this.#host.log(
				`a2a-bridge: schema of tool '${tool.name}' not convertible (${errorText(err, TOOL_FAILED)}); listed as {"type":"object"}`,
			);
			schema = { ...FALLBACK_SCHEMA };
		}
		if (cacheable) this.#schemas.set(key as object, schema);
		return schema;
	}
}

const pick = (t: HostTool) => ({ description: t.description, parameters: t.parameters });
