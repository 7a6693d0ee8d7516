/** Good and bad values for each config field (src/config/fields.ts), shared by the tests that go field by field. */
import { SCHEMA_URL } from "../../src/config/file.ts";

export const OWNER_T = "o".repeat(43);
export const A = "a".repeat(43);
export const B = "b".repeat(43);

/**
 * Per field: values the schema and the validator must both accept, values both must refuse (schema.test.ts;
 * a generator adds random ones there). A live-edit test writes the good ones into a running bridge's file.
 */
export const FIELD_CASES: Record<string, { good: unknown[]; bad: unknown[] }> = {
	$schema: { good: [SCHEMA_URL, "./x.json", ""], bad: [1, null, true, {}, []] },
	port: { good: [0, 1, 8765, 65535], bad: [-1, 65536, 1.5, "8080", null, true, [], {}, 1e10] },
	token: {
		good: ["a".repeat(32), "!~".repeat(16), A, 5, null, true, {}, []],
		bad: ["a".repeat(31), "", `${"a".repeat(32)} `, `${"a".repeat(32)}\t`, `${"a".repeat(32)}é`, " ".repeat(40)],
	},
	host: { good: ["127.0.0.1", "::1", "localhost", " x "], bad: ["", "   ", "\t\n", 127, null, [], {}] },
	host_llm: { good: ["allow", "deny"], bad: ["Allow", "yes", "", true, null, 0] },
	allowed_origins: {
		good: [[], ["http://localhost:3000"], ["HTTPS://Example.com"], ["http://[::1]:5173"], ["http://a.b:65535"]],
		bad: [
			"http://x",
			null,
			{},
			[3],
			["not a url"],
			["http://localhost:3000/"],
			["http://localhost:3000/app"],
			["ftp://x"],
			["http://u@x"],
			["http://x?q"],
			["http://x:65536"],
			["http://x#f"],
		],
	},
	tokens: {
		good: [
			[],
			[{ name: "ci", token: A }],
			[
				{ name: "a-1_z", token: A },
				{ name: "b", token: B },
			],
		],
		bad: [
			{},
			null,
			"ci",
			["x"],
			[[]],
			[{ name: "ci" }],
			[{ token: A }],
			[{ name: "ci", token: A, scope: "read" }],
			[{ name: "CI", token: A }],
			[{ name: "owner", token: A }],
			[{ name: "", token: A }],
			[{ name: "x".repeat(33), token: A }],
			[{ name: "ci", token: "short" }],
			[{ name: "ci", token: 5 }],
			Array.from({ length: 257 }, (_, i) => ({ name: `t${i}`, token: `${"k".repeat(40)}${i}` })),
		],
	},
	blob: { good: ["write", "read", "off"], bad: ["Write", "rw", "", null, 1, true] },
	name: {
		good: ["lab-a", "LabBox_2", "a", "x".repeat(48)],
		bad: ["", "-lab", "lab a", "lab.a", "x".repeat(49), null, 1, true],
	},
};
