import { describe, expect, test } from "bun:test";
import { notifier } from "../../../src/host/notify.ts";

describe("notifier", () => {
	test("a live UI gets the notification; one that throws (shut down) -> the line goes to the log", () => {
		const shown: string[] = [];
		const logged: string[] = [];
		const live = notifier({ ui: { notify: (t: string) => shown.push(t) } } as never, l => logged.push(l));
		live("up", "info");
		const gone = notifier(
			{
				ui: {
					notify: () => {
						throw new Error("UI closed");
					},
				},
			} as never,
			l => logged.push(l),
		);
		gone("down", "warning");
		expect({ shown, logged }).toEqual({ shown: ["up"], logged: ["down"] });
	});
});
