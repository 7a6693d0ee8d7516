/**
 * Loaded by `scripts/host.ts` (with `-e`) only when omp found no model: registers a provider for this
 * process only, so the host creates its Main session and the bridge starts. Nothing is written to
 * ~/.omp. The bridge never asks a model anything; a turn that did start would fail fast (port 1).
 */
import type { ExtensionAPI } from "@oh-my-pi/pi-coding-agent";

export default function placeholderProvider(pi: ExtensionAPI): void {
	pi.registerProvider("a2a-placeholder", {
		baseUrl: "http://127.0.0.1:1/v1",
		api: "anthropic-messages",
		apiKey: "not-a-real-key",
		models: [
			{
				id: "no-model",
				name: "placeholder (no model configured; the A2A bridge needs none)",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 100_000,
				maxTokens: 1_000,
			},
		],
	});
}
