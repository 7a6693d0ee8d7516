/**
 * `npm run demo:lab`: the lab guide's story (docs/guide/lab.md) played against the simulated board, both ends
 * on this machine, no API key. The headless host (`npm run host`'s script) serves a throwaway HOME whose work
 * directory holds the board (test/fixtures/lab/board.py on its own pseudo-terminal pair); the "laptop" is the
 * official MCP SDK client, making the calls an agent would. Each step is printed with what the board itself
 * recorded (its board.jsonl) or what is on disk, and checked; everything is removed at the end.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { errorText } from "../src/text/error-text.ts";
import { type DemoHost, homeDir, startDemoHost } from "./demo-host.ts";
import { LAB_FIXTURES, SimBoard } from "./lab-board.ts";

const STEPS = 7;
let step = 0;
const say = (line: string): void => {
	process.stdout.write(`demo:lab: ${line}\n`);
};
const next = (line: string): void => say(`${++step}/${STEPS} ${line}`);
const sha256 = (b: Uint8Array): string => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const reprDigest = (b: Uint8Array): string => `sha-256=:${new Bun.CryptoHasher("sha256").update(b).digest("base64")}:`;

/** A failed check ends the demo with what was expected and what was seen. */
function check(ok: boolean, what: string): void {
	if (!ok) throw new Error(`check failed: ${what}`);
	say(`    ok: ${what}`);
}

interface Laptop {
	client: Client;
	call(name: string, args: Record<string, unknown>): Promise<string>;
}

async function laptop(url: string, token: string, name: string): Promise<Laptop> {
	const client = new Client({ name, version: "0" });
	await client.connect(
		new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
	);
	return {
		client,
		async call(tool, args) {
			say(`    ${name} -> ${tool} ${JSON.stringify(args)}`);
			const r = (await client.callTool({ name: tool, arguments: args })) as {
				content: Array<{ text?: string }>;
				isError?: boolean;
			};
			const text = r.content.map(c => c.text ?? "").join("\n");
			if (r.isError) throw new Error(`${tool}: ${text}`);
			const shown = text.trim().split("\n");
			say(`       ${shown.slice(0, 3).join(" | ")}${shown.length > 3 ? ` | … (${shown.length} lines)` : ""}`);
			return text;
		},
	};
}

async function main(): Promise<number> {
	const t0 = Date.now();
	const base = mkdtempSync(join(tmpdir(), "a2a-demo-lab-"));
	const home = homeDir(base, "lab");
	const work = join(home, "work");
	mkdirSync(join(work, "test", "fixtures"), { recursive: true });
	symlinkSync(LAB_FIXTURES, join(work, "test", "fixtures", "lab"));
	let host: DemoHost | undefined;
	let board: SimBoard | undefined;
	let a: Laptop | undefined;
	try {
		next(`host: npm run host in a throwaway HOME (${home}), serving ${work}`);
		host = await startDemoHost(home);
		const { url, secret } = host;
		say(`    the bridge serves ${url}`);
		board = await SimBoard.start(join(work, "lab"));
		say(
			`    the simulated board is on its bench: serial end ${board.serial}, record ${join(work, "lab", "board.jsonl")}`,
		);
		a = await laptop(url, secret, "laptop");
		const { call } = a;

		next("firmware up: PUT /blob?path=lab/fw.bin with Repr-Digest");
		const fw = crypto.getRandomValues(new Uint8Array(1_000_000));
		const put = await fetch(new URL("/blob?path=lab/fw.bin", url), {
			method: "PUT",
			headers: { authorization: `Bearer ${secret}`, "repr-digest": reprDigest(fw) },
			body: fw,
		});
		say(`    ${put.status} ${await put.text()}`);
		check(put.status === 200, "200, and the file on the host is the image (sha256 compared on disk)");
		check(sha256(new Uint8Array(readFileSync(join(work, "lab", "fw.bin")))) === sha256(fw), "same bytes on disk");

		next("flash through bash, with live progress (the flasher resets the board and waits for it)");
		let mark = board.events().length;
		const command = "python3 test/fixtures/lab/flash.py lab/ttyBOARD lab/fw.bin 2";
		say(`    laptop -> bash ${JSON.stringify({ command })} (asking for progress)`);
		const flashed = (await a.client.callTool({ name: "bash", arguments: { command } }, undefined, {
			onprogress: p => say(`       progress: ${(p.message ?? "").trimEnd().split("\n").at(-1)}`),
			resetTimeoutOnProgress: true,
		})) as { content: Array<{ text: string }> };
		check(flashed.content[0]?.text.includes(`verified ${sha256(fw)}`) === true, "the flasher verified the image");
		const rec = await board.until("flash", e => e.event === "flash", 5000, mark);
		check(
			rec.ok === true && rec.sha256 === sha256(fw),
			`the board's record: flash ok, sha256 ${sha256(fw).slice(0, 12)}…`,
		);
		const boot = await board.until("boot", e => e.event === "booted", 10_000, mark);
		check(boot.sha256 === sha256(fw), "the board's record: booted the new image");

		next("serial console through hub: start, type, Ctrl-C, a wait that cannot match stale output, the trap, leave");
		await call("hub", {
			op: "start",
			name: "console",
			application: "python3",
			args: ["test/fixtures/lab/console.py", "-b", "115200", "lab/ttyBOARD"],
			ready: { log: "Terminal ready" },
		});
		mark = board.events().length;
		const cursor = Number(/cursor=(\d+)\]$/.exec((await call("hub", { op: "logs", name: "console" })).trimEnd())?.[1]);
		await call("hub", { op: "send", name: "console", text: "version" });
		// A cursor read returns the log's last lines, older ones included, from the first new byte on: the answer
		// is below the typed line, and a read that came before it follows again from its own cursor.
		const answer = (tail: string): string[] => {
			const rows = tail.split("\n");
			return rows
				.slice(rows.findLastIndex(l => l.trimEnd().endsWith("version")) + 1)
				.filter(l => /^(firmware|factory image)/.test(l.trim()));
		};
		let tail = await call("hub", { op: "logs", name: "console", cursor, follow: true, timeout: 10 });
		for (let i = 0; i < 5 && answer(tail).length === 0; i++) {
			const next = Number(/cursor=(\d+)\]$/.exec(tail.trimEnd())?.[1]);
			tail = await call("hub", { op: "logs", name: "console", cursor: next, follow: true, timeout: 10 });
		}
		check(answer(tail).length > 0, `the board's answer, below the typed line: ${answer(tail)[0] ?? "(none)"}`);
		await call("hub", { op: "send", name: "console", text: "watch" });
		await call("hub", { op: "send", name: "console", keys: ["CTRL_C"] });
		await board.until("Ctrl-C", e => e.event === "interrupt", 5000, mark);
		const marker = `mark-${process.pid}`;
		await call("hub", { op: "send", name: "console", text: `echo ${marker}` });
		await call("hub", { op: "send", name: "console", text: "reboot" });
		const waited = await call("hub", {
			op: "wait",
			name: "console",
			pattern: `${marker}[\\s\\S]*login:`,
			timeout: 30,
		});
		check(waited.includes("Matched:"), "the marker wait matched the new boot's login line");
		const lines = board
			.events()
			.slice(mark)
			.map(e => (e.event === "line" ? `line "${e.text}"` : e.event));
		say(`    the board's record: ${lines.join(", ")}`);
		check(
			lines.join(",") === `line "version",line "watch",interrupt,line "echo ${marker}",line "reboot",reboot,booted`,
			"the board received exactly that, Ctrl-C as a byte, and booted again before the wait answered",
		);
		// The trap, now that the log holds a login line: the same wait without a marker answers from that old line.
		mark = board.events().length;
		await call("hub", { op: "send", name: "console", text: "reboot" });
		const before = Date.now();
		await call("hub", { op: "wait", name: "console", pattern: "login:", timeout: 30 });
		const answeredAt = Date.now() / 1000;
		const rebooted = await board.until("the boot after the reboot", e => e.event === "booted", 10_000, mark);
		check(
			rebooted.t > answeredAt,
			`the trap: a plain "login:" wait answered in ${Math.round(answeredAt * 1000 - before)} ms, ` +
				`${(rebooted.t - answeredAt).toFixed(1)} s before the board booted again (its record): a stale match`,
		);
		await call("hub", { op: "send", name: "console", text: "\u0001\u0018", enter: false });
		check(
			/exit=0/.test(await call("hub", { op: "wait", name: "console", timeout: 10 })),
			"the console left on C-a C-x",
		);
		await call("hub", { op: "stop", name: "console" });

		next("a build through hub, started by the laptop, read to its exit status by a second client");
		const script =
			'for i in 1 2 3 4; do echo "[$i/4] CC unit$i.o"; sleep 1; done; head -c 3000000 /dev/urandom > lab/app.bin; echo built';
		await call("hub", { op: "start", name: "build", application: "/bin/sh", args: ["-c", script], pty: false });
		const b = await laptop(url, secret, "desktop");
		try {
			const done = await b.call("hub", { op: "wait", name: "build", timeout: 30 });
			check(/build: exited exit=0/.test(done), "the second client saw the build exit 0");
		} finally {
			await b.client.close();
		}

		next("artifact back: GET with Want-Repr-Digest, cut after 1 MB, resumed with Range");
		const onDisk = new Uint8Array(readFileSync(join(work, "lab", "app.bin")));
		const where = new URL("/blob?path=lab/app.bin", url);
		const auth = { authorization: `Bearer ${secret}` };
		const first = await fetch(where, { headers: { ...auth, "want-repr-digest": "sha-256=1" } });
		const announced = first.headers.get("repr-digest") ?? "";
		say(`    ${first.status}, Repr-Digest: ${announced}`);
		const parts: Uint8Array[] = [];
		let got = 0;
		const reader = (first.body as ReadableStream<Uint8Array>).getReader();
		while (got < 1_000_000) {
			const { value, done } = await reader.read();
			if (done) break;
			parts.push(value);
			got += value.length;
		}
		await reader.cancel();
		const rest = await fetch(where, { headers: { ...auth, range: `bytes=${got}-` } });
		say(`    cut at ${got} bytes; Range: bytes=${got}- -> ${rest.status} ${rest.headers.get("content-range")}`);
		parts.push(new Uint8Array(await rest.arrayBuffer()));
		const copy = Buffer.concat(parts);
		check(reprDigest(copy) === announced && announced === reprDigest(onDisk), "the copy's digest is the host's");

		next(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
		return 0;
	} finally {
		await a?.client.close().catch(() => {});
		if (host) say(`host stopped: ${(await host.stop()).replace(/^a2a host: /, "")}`);
		await board?.stop();
		rmSync(base, { recursive: true, force: true });
	}
}

main().then(
	code => {
		say(code === 0 ? "ok: flashed, consoled, built and fetched back through the bridge" : "FAILED (see above)");
		process.exit(code);
	},
	err => {
		say(`FAILED: ${errorText(err)}`);
		process.exit(1);
	},
);
