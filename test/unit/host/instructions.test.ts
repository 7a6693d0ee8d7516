import { describe, expect, test } from "bun:test";
import { instructionsFor } from "../../../src/host/instructions.ts";

const ALL = ["read", "bash", "edit", "write", "hub", "task"];

describe("server instructions: true for this host (contract §20)", () => {
	test("with hub, bash and /blob write: long work, consoles (and the stale-wait trap), the bash cut and both /blob ways", () => {
		const text = instructionsFor({ cwd: "/lab", tools: ALL, blob: "write" });
		expect(text).toStartWith("Tools of the omp host in /lab, run in its Main session");
		expect(text).toContain('hub op "start" runs a program (on a pty by default)');
		expect(text).toContain("CTRL_C");
		expect(text).toContain('A "wait" pattern also matches output printed before the call');
		expect(text).toContain("after 60 s by default");
		expect(text).toContain("about 50 KB");
		expect(text).toContain("PUT /blob?path=P uploads");
		expect(text).toContain("GET /blob?path=P downloads");
		expect(text.split("\n").length).toBeLessThanOrEqual(5);
	});

	test("hub is named only when the host lists it; bash only when listed", () => {
		const noHub = instructionsFor({ cwd: "/lab", tools: ["read", "bash"], blob: "write" });
		expect(noHub).not.toMatch(/\bhub op\b|"send"|"logs"/);
		expect(noHub).toContain("This host lists no hub tool");
		const bare = instructionsFor({ cwd: "/lab", tools: ["read"], blob: "write" });
		expect(bare).not.toMatch(/\bbash\b/);
	});

	test("/blob is described as far as it is served: read means no upload, off means neither", () => {
		const read = instructionsFor({ cwd: "/lab", tools: ALL, blob: "read" });
		expect(read).not.toContain("PUT /blob");
		expect(read).toContain("GET /blob?path=P downloads");
		expect(read).toContain("uploads are off on this host");
		const off = instructionsFor({ cwd: "/lab", tools: ALL, blob: "off" });
		expect(off).not.toMatch(/(PUT|GET) \/blob/);
		expect(off).toContain("The /blob route is off on this host");
	});
});
