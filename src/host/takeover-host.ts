/**
 * The takeover's reach into the host (contract §8): the model registry, the Main session's model
 * and settings, the custom-API registry and `globalThis.fetch`, shaped as `TakeoverHost`.
 */
import * as ai from "@oh-my-pi/pi-ai";
import {
	CLAIM_API_KEY,
	DENY_API,
	DENY_MESSAGE,
	type HostSettings,
	type ModelRow,
	type TakeoverHost,
} from "../takeover/plan.ts";
import { processFacts, refusalFor } from "./facts.ts";
import { authCheck } from "./facts-probe.ts";
import { liveMain, logLine } from "./main.ts";

/** The takeover's own custom-API source: not the extension path, so a subagent spawn leaves it alone. */
const TAKEOVER_SOURCE = "a2a-bridge:takeover";

interface TakeoverMain {
	model?: ModelRow;
	agent: { setModel(row: unknown): void };
	settings: HostSettings;
	modelRegistry: {
		getAll(): ModelRow[];
		registerProvider(name: string, config: Record<string, unknown>): void;
		unregisterProvider(name: string): void;
		awaitInitialBackgroundRefresh(): Promise<void>;
		authStorage: unknown;
	};
}

function denyStream() {
	const stream = ai.createAssistantMessageEventStream();
	queueMicrotask(() => stream.fail(new Error(DENY_MESSAGE)));
	return stream;
}

export function takeoverHost(): TakeoverHost {
	const main = () => liveMain() as unknown as TakeoverMain | null;
	// Main and its subagents share one registry; the last one seen serves while Main is parked.
	let seen: TakeoverMain["modelRegistry"] | undefined;
	const registry = (): TakeoverMain["modelRegistry"] => {
		seen = main()?.modelRegistry ?? seen;
		if (!seen) throw new Error("no model registry yet: no Main session has started");
		return seen;
	};
	return {
		models: () => registry().getAll(),
		// hasAuth up to omp 18.2, keys.source from 18.3 (docs/host-facts.md).
		hasAuth: provider => {
			const has = authCheck(registry().authStorage);
			if (has === null) throw new Error("the model registry's auth storage has neither hasAuth nor keys.source");
			return has(provider);
		},
		settled: () => registry().awaitInitialBackgroundRefresh(),
		registerDenyApi: () => ai.registerCustomApi(DENY_API, denyStream, TAKEOVER_SOURCE),
		unregisterDenyApi: () => ai.unregisterCustomApis(TAKEOVER_SOURCE),
		unavailable: () => refusalFor(processFacts(), "takeover"),
		claimProvider: (provider, rows) =>
			registry().registerProvider(provider, {
				baseUrl: rows[0]?.baseUrl,
				apiKey: CLAIM_API_KEY,
				api: DENY_API,
				models: rows,
			}),
		releaseProvider: provider => registry().unregisterProvider(provider),
		mainModel: () => main()?.model ?? null,
		setMainModel: row => main()?.agent.setModel(row),
		mainSettings: () => main()?.settings ?? null,
		getFetch: () => globalThis.fetch,
		setFetch: f => {
			globalThis.fetch = f;
		},
		log: logLine,
	};
}
