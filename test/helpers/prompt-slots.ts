/** Prompt slots from a real registry (core/holdings.ts), as a call gets them from the server. */
import { NO_SLOTS, TokenHoldings } from "../../src/core/holdings.ts";
import type { PromptOwner } from "../../src/host/prompt-signal.ts";

/** A registry bounding `prompts` at `each` per token (256 in all), and the owner of `token`'s prompts in it. */
export function promptSlots(each = 8) {
	const reg = new TokenHoldings({ ...NO_SLOTS, calls: 1024, prompts: { each, total: 256 } }, () => 1);
	const owner = (token = ""): PromptOwner => ({
		token,
		take: onEnd => reg.take("prompts", { tokenName: token }, onEnd),
	});
	return { reg, owner };
}
