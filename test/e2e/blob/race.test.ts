/**
 * Issue 38.2, the check-then-use race: a helper swaps a directory and a symlink to the bridge's config
 * directory in a tight loop while hundreds of PUTs and POSTs aim through that name, against a real host.
 * Pass: the config is byte-identical, the audit log only grew by real records, no own-family file
 * appeared, the forged token is refused (401), and every reply is 200 or a row of the `/blob` error table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawn } from "bun";
import { BLOB_ERRORS } from "../../../src/blob/parse.ts";
import { BUN, Host, initializeStatus } from "../../helpers/host.ts";

const ROUNDS = 400;
const WORKERS = 6;

let host: Host;
let atk: string;
beforeAll(async () => {
	host = await Host.start();
	atk = realpathSync(mkdtempSync(join(tmpdir(), "a2a-race-")));
}, 90_000);
afterAll(async () => {
	await host.stop();
	host.cleanup();
	rmSync(atk, { recursive: true, force: true });
});

const status = (bearer: string): Promise<number> => initializeStatus(host.url, bearer, "race");

describe("issue 38.2: a directory swapped for a link to the config directory while uploads run (real host)", () => {
	test(`${ROUNDS} PUTs and ${ROUNDS} POSTs through the swapped name: own files untouched, forged token 401, every reply 200 or a table row`, async () => {
		const agent = dirname(host.configPath);
		// One upload first, so the audit log exists and the listing below holds it.
		const warm = await fetch(new URL(`/blob?path=${encodeURIComponent(join(atk, "warm"))}`, host.url), {
			method: "PUT",
			headers: { authorization: `Bearer ${host.token}` },
			body: "warm",
		});
		expect(warm.status).toBe(200);
		const config = readFileSync(host.configPath);
		const listing = readdirSync(agent).sort();
		const forged = crypto.randomUUID() + crypto.randomUUID();
		const forgedConfig = config
			.toString("utf8")
			.replace("{", `{\n\t"tokens": [{ "name": "evil", "token": "${forged}" }],`);
		// `d` is a plain directory with a decoy config in it; `l` links to the bridge's directory; the helper swaps them.
		mkdirSync(join(atk, "d"));
		writeFileSync(join(atk, "d", "a2a-bridge.json"), "{}\n");
		symlinkSync(agent, join(atk, "l"));
		const audit = readFileSync(host.auditPath);
		const swapper = spawn({
			cmd: [BUN, join(import.meta.dir, "..", "..", "helpers", "exchange.ts"), join(atk, "d"), join(atk, "l"), "120000"],
			stdout: "pipe",
			stderr: "pipe",
		});
		const odd: string[] = [];
		const replies = new Map<string, number>();
		const send = async (method: string, name: string, body: string) => {
			const path = encodeURIComponent(join(atk, "d", name));
			const res = await fetch(new URL(`/blob?path=${path}`, host.url), {
				method,
				headers: { authorization: `Bearer ${host.token}` },
				body,
				signal: AbortSignal.timeout(30_000),
			});
			const code = res.status === 200 ? null : ((await res.json()) as { code: string }).code;
			if (code === null) await res.body?.cancel();
			const got = code ?? "ok";
			const row = got === "ok" ? 200 : (BLOB_ERRORS as Record<string, number>)[got];
			if (row !== res.status) odd.push(`${method} ${res.status} ${got}`);
			replies.set(`${method} ${res.status} ${got}`, (replies.get(`${method} ${res.status} ${got}`) ?? 0) + 1);
		};
		let next = 0;
		const worker = async () => {
			for (let i = next++; i < ROUNDS; i = next++) {
				await send("PUT", "a2a-bridge.json", forgedConfig);
				await send("POST", "a2a-bridge.log.1", '{"forged":"line"}\n');
			}
		};
		try {
			await Promise.all(Array.from({ length: WORKERS }, worker));
		} finally {
			swapper.kill();
			await swapper.exited;
		}
		console.log("replies:", Object.fromEntries(replies));
		// Second channel: the files on disk, byte for byte, and the directory's names.
		expect(readFileSync(host.configPath).equals(config)).toBe(true);
		expect(readdirSync(agent).sort()).toEqual(listing);
		const grown = readFileSync(host.auditPath);
		expect(grown.subarray(0, audit.length).equals(audit)).toBe(true);
		for (const line of grown
			.subarray(audit.length)
			.toString("utf8")
			.split("\n")
			.filter(l => l !== "")) {
			expect(JSON.parse(line)).toHaveProperty("tool");
		}
		expect(grown.toString("utf8")).not.toContain("forged");
		// Given time to apply an edit (it would within a second), the forged token is still refused.
		await Bun.sleep(1500);
		expect(await status(forged)).toBe(401);
		expect(await status(host.token)).toBe(200);
		expect(odd).toEqual([]);
	}, 240_000);
});
