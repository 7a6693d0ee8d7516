import { join } from "node:path";
import { Host } from "../test/helpers/host.ts";
import { load } from "./load.ts";

const what = process.argv[2] ?? "list";
const dir = process.argv[3] ?? "/tmp/prof";
const host = await Host.start({
	env: { BUN_OPTIONS: `--cpu-prof-md --cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200` },
});
try {
	if (what === "list" || what === "modern" || what === "legacy32") {
		const r = await load({
			kind: "rpc",
			url: host.url,
			token: host.token,
			sessions: what === "list" ? 1 : 32,
			perSession: what === "list" ? 20000 : 600,
			messages: [{ method: "tools/list" }],
			...(what === "modern" ? { modern: true } : {}),
		});
		console.log(JSON.stringify(r));
	} else {
		const file = join(host.home, "big.bin");
		const fd = require("node:fs").openSync(file, "w");
		const block = new Uint8Array(1 << 20);
		for (let i = 0; i < 1024; i++) require("node:fs").writeSync(fd, block);
		require("node:fs").closeSync(fd);
		for (let i = 0; i < 3; i++) {
			const r = await load({
				kind: "download",
				url: `${host.url}blob?path=${encodeURIComponent(file)}`,
				headers: { authorization: `Bearer ${host.token}` },
			});
			console.log(JSON.stringify(r));
		}
	}
} finally {
	await host.stop();
	host.cleanup();
}
