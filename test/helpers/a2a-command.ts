/** `/a2a` typed into a real host, as the end-to-end tests drive it: the bridge's answer, and a token added live. */
import type { Host } from "./host.ts";
import { waitFor } from "./wait.ts";

/** `/a2a <text>`, resolved with the bridge's answer: the first notification after it that `pred` accepts. */
export async function a2aAnswer(
	host: Host,
	text: string,
	pred: (m: string) => boolean = m => m.startsWith("A2A bridge: "),
): Promise<string> {
	const before = host.notifications().length;
	await host.command(text);
	let found: string | undefined;
	await waitFor(`an answer to ${text}`, () => {
		found = host.notifications().slice(before).find(pred);
		return found !== undefined;
	});
	return found as string;
}

/** Adds the token `name` live (`/a2a token add`) and returns its secret, shown once in the answer. */
export async function addLiveToken(host: Host, name: string): Promise<string> {
	const answer = await a2aAnswer(host, `/a2a token add ${name}`, m =>
		m.startsWith(`A2A bridge: token '${name}' is live`),
	);
	const secret = /Shown once:\n(\S+)\n/.exec(answer)?.[1];
	if (!secret) throw new Error(`no secret in: ${answer}`);
	return secret;
}
