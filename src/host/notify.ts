/** How the bridge tells the user something: the host's notification, or host stderr once the UI is gone. */
import type { ExtensionContext } from "@oh-my-pi/pi-coding-agent";

export type Notify = (text: string, level: "info" | "warning" | "error") => void;

/** Notifications through `ctx.ui`; a UI that throws (shut down) gets the line on stderr instead. */
export function notifier(ctx: Pick<ExtensionContext, "ui">, log: (line: string) => void): Notify {
	return (text, level) => {
		try {
			ctx.ui.notify(text, level);
		} catch {
			log(text);
		}
	};
}
