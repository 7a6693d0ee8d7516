/**
 * The docs site as a reader gets it: `npm run docs:build` writes it, a local static server serves it, and
 * headless Chromium loads its pages with every host but 127.0.0.1 unresolvable, so a request the site would make
 * to the network fails and is reported. The browser is the one the pinned dev dependency `@sparticuz/chromium`
 * ships (test/helpers/chromium.ts), driven by puppeteer-core: never a system browser, never a download.
 * Screenshots of the landing page and the architecture diagram are saved to .tmp/site/. `npm run docs` is
 * started once with its default port taken.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { spawn } from "bun";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { packagedChromium } from "../../helpers/chromium.ts";
import { shellBlocks } from "../../helpers/docs.ts";
import { ROOT } from "../../helpers/host.ts";
import { runCommand } from "../../helpers/run.ts";

const SHOT = join(ROOT, ".tmp", "site", "landing.png");
const WAIT = 30_000;

let out: string;
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;
let base: string;
let chromiumPath: string;
let chromiumVersion: string;
const problems: string[] = [];

/** Serves the built site: `/x/` is `x/index.html`, `/x` is `x.html`; anything else is a 404. */
function serve(dir: string) {
	return Bun.serve({
		hostname: "127.0.0.1",
		port: 0,
		fetch(req) {
			let path = decodeURIComponent(new URL(req.url).pathname);
			if (path.endsWith("/")) path += "index.html";
			const file = resolve(dir, `.${path}`);
			if (!file.startsWith(`${dir}/`)) return new Response("outside the site", { status: 403 });
			for (const f of [file, `${file}.html`]) {
				if (existsSync(f) && statSync(f).isFile()) return new Response(Bun.file(f));
			}
			return new Response(Bun.file(join(dir, "404.html")), { status: 404 });
		},
	});
}

/** A page that records console errors, page errors, failed requests and HTTP errors into `problems`. */
async function open(path: string): Promise<Page> {
	const page = await browser.newPage();
	await page.setViewport({ width: 1280, height: 800 });
	page.on("console", m => {
		if (m.type() === "error") problems.push(`${path}: console error: ${m.text()}`);
	});
	page.on("pageerror", e => problems.push(`${path}: page error: ${e}`));
	page.on("requestfailed", r => problems.push(`${path}: request failed: ${r.url()} ${r.failure()?.errorText}`));
	page.on("response", r => {
		if (r.status() >= 400) problems.push(`${path}: HTTP ${r.status()}: ${r.url()}`);
	});
	await page.goto(`${base}${path}`, { waitUntil: "networkidle0", timeout: WAIT });
	return page;
}

/** Picks `href` in the navigation bar's language menu, as a reader does (hover, then click). */
async function switchTo(page: Page, href: string): Promise<void> {
	const link = `.VPNavBarTranslations a[href="${href}"]`;
	await page.hover(".VPNavBarTranslations button");
	await page.waitForSelector(link, { visible: true, timeout: WAIT });
	await page.click(link);
	await page.waitForFunction(`location.pathname === ${JSON.stringify(href)}`, { timeout: WAIT });
}

const text = (page: Page, selector: string) =>
	page.$eval(
		selector,
		el =>
			el.textContent
				?.replace(/\u200b/g, "")
				.replace(/\s+/g, " ")
				.trim() ?? "",
	);

beforeAll(async () => {
	out = mkdtempSync(join(tmpdir(), "a2a-site-"));
	const built = await runCommand(["npm", "run", "--silent", "docs:build", "--", "--outDir", out], {
		cwd: ROOT,
		timeoutMs: 600_000,
	});
	if (built.code !== 0) throw new Error(`npm run docs:build exited ${built.code}:\n${built.out}\n${built.err}`);
	server = serve(out);
	base = `http://127.0.0.1:${server.port}`;
	const chromium = await packagedChromium();
	chromiumPath = chromium.path;
	chromiumVersion = chromium.version;
	browser = await puppeteer.launch({
		executablePath: chromium.path,
		env: { ...process.env, ...chromium.env },
		headless: true,
		// Root in CI needs --no-sandbox; every host but the local server is made unresolvable (offline proof).
		args: ["--no-sandbox", "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
	});
}, 660_000);

afterAll(async () => {
	await browser?.close();
	server?.stop(true);
	if (out) rmSync(out, { recursive: true, force: true });
});

describe("docs site in headless Chromium", () => {
	test("the browser is the pinned dev dependency's, not one from the system", async () => {
		const pid = browser.process()?.pid;
		expect(pid).toBeGreaterThan(0);
		// Second channel: the kernel's view of what is running, not what was asked for.
		expect(readlinkSync(`/proc/${pid}/exe`)).toBe(chromiumPath);
		expect(chromiumPath.startsWith(join(ROOT, ".tmp", "chromium", chromiumVersion))).toBe(true);
		const pinned = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies["@sparticuz/chromium"];
		expect(chromiumVersion).toBe(pinned);
		// The package is versioned by Chromium's major release.
		expect(await browser.version()).toStartWith(`HeadlessChrome/${pinned.split(".")[0]}.`);
		console.log(`docs site: browser ${await browser.version()} from @sparticuz/chromium ${pinned}`);
	});

	test("landing page: the README's opening and quick start, screenshot saved", async () => {
		const page = await open("/");
		expect(await text(page, ".VPHero .name")).toBe("pi-a2a-ext");
		const opening = readFileSync(join(ROOT, "README.md"), "utf8").split("\n")[2] ?? "";
		expect(await text(page, ".vp-doc")).toContain(opening.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").slice(0, 40));
		const quick = shellBlocks("README.md")[0]?.[0]?.text ?? "";
		expect(quick).toBe("npm install && npm run host");
		expect(await page.$$eval(".vp-doc pre code", els => els.map(e => e.textContent ?? ""))).toContainEqual(
			expect.stringContaining(quick),
		);
		mkdirSync(dirname(SHOT), { recursive: true });
		await page.screenshot({ path: SHOT });
		expect(statSync(SHOT).size).toBeGreaterThan(10_000);
		console.log(`docs site: landing page screenshot: ${relative(ROOT, SHOT)}`);
		await page.close();
	});

	test("protocol page: the error table, row for row as docs/protocol.md has it", async () => {
		const md = readFileSync(join(ROOT, "docs", "protocol.md"), "utf8");
		const section = md.slice(md.indexOf("\n## Errors\n"));
		const table = section.slice(section.indexOf("\n| kind |")).split("\n\n")[0] ?? "";
		const kinds = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map(m => m[1]);
		expect(kinds.length).toBeGreaterThan(10);
		const page = await open("/protocol.html");
		const rows = await page.$eval("h2#errors", h2 => {
			let el = h2.nextElementSibling;
			while (el && el.tagName !== "TABLE") el = el.nextElementSibling;
			return [...(el?.querySelectorAll("tbody tr") ?? [])].map(tr => tr.querySelector("td")?.textContent ?? "");
		});
		expect(rows).toEqual(kinds);
		await page.close();
	});

	test("architecture page: the Mermaid diagram is drawn as SVG", async () => {
		const page = await open("/architecture.html");
		await page.waitForSelector(".mermaid-diagram svg", { timeout: WAIT });
		const svg = await text(page, ".mermaid-diagram svg");
		for (const label of ["src/core/", "src/host/", "omp host"]) expect(svg).toContain(label);
		expect(await page.$$(".mermaid-diagram svg .node")).toHaveLength(9);
		expect(await page.$(".mermaid-source")).toBeNull();
		await (await page.$(".mermaid-diagram"))?.screenshot({ path: join(dirname(SHOT), "architecture.png") });
		await page.close();
	});

	test("language switch: English to 简体中文 and back; reference pages in Chinese, contributor pages say they stay English", async () => {
		const page = await open("/guide/install.html");
		await switchTo(page, "/zh/guide/install.html");
		await page.waitForFunction('document.documentElement.lang === "zh-CN"', { timeout: WAIT });
		expect(new URL(page.url()).pathname).toBe("/zh/guide/install.html");
		expect(await text(page, ".vp-doc h1")).toBe("安装与运行");
		expect(await page.$$eval(".vp-doc h2", hs => hs.map(h => h.textContent ?? ""))).toContainEqual(
			expect.stringContaining("安装到你的 omp"),
		);
		await switchTo(page, "/guide/install.html");
		await page.waitForFunction('document.documentElement.lang === "en-US"', { timeout: WAIT });
		expect(await text(page, ".vp-doc h1")).toBe("Install and run");
		await page.close();

		for (const [path, h1] of [
			["/zh/protocol.html", "线上协议"],
			["/zh/security.html", "安全"],
		] as const) {
			const zh = await open(path);
			expect(await text(zh, ".vp-doc h1")).toBe(h1);
			expect(await zh.$(".vp-doc .info")).toBeNull();
			await zh.close();
		}
		const stub = await open("/zh/architecture.html");
		expect(await text(stub, ".vp-doc .info")).toContain("只保留英文");
		const links = await stub.$$eval(".vp-doc .info a", as => as.map(a => a.getAttribute("href")));
		expect(links).toContain("/architecture.html");
		await stub.close();
	});

	test("local search finds a page, from the built site alone", async () => {
		const page = await open("/");
		await page.click(".VPNavBarSearch button");
		await page.waitForSelector(".VPLocalSearchBox input", { visible: true, timeout: WAIT });
		await page.type(".VPLocalSearchBox input", "approval-timeout");
		await page.waitForSelector(".VPLocalSearchBox .result", { timeout: WAIT });
		const hits = await page.$$eval(".VPLocalSearchBox .result", rs => rs.map(r => r.getAttribute("href") ?? ""));
		expect(hits).toContainEqual(expect.stringContaining("/guide/install.html"));
		await page.close();
	});

	test("every internal link and #anchor in the built pages resolves", () => {
		const pages = (dir: string): string[] =>
			readdirSync(dir).flatMap(n => {
				const p = join(dir, n);
				return statSync(p).isDirectory() ? pages(p) : n.endsWith(".html") ? [p] : [];
			});
		const files = pages(out).filter(f => !f.endsWith("404.html"));
		const ids = new Map(
			files.map(f => [f, new Set([...readFileSync(f, "utf8").matchAll(/ id="([^"]+)"/g)].map(m => m[1]))]),
		);
		const broken: string[] = [];
		for (const file of files) {
			for (const [, href = ""] of readFileSync(file, "utf8").matchAll(/<a [^>]*href="([^"]+)"/g)) {
				if (/^[a-z]+:/i.test(href)) continue;
				const [path = "", hash] = href.replace(/&amp;/g, "&").split("#", 2);
				const target =
					path === ""
						? file
						: resolve(path.startsWith("/") ? out : dirname(file), `.${path.startsWith("/") ? path : `/${path}`}`);
				const html = target.endsWith("/")
					? join(target, "index.html")
					: target.endsWith(".html")
						? target
						: `${target}.html`;
				const where = `${relative(out, file)}: ${href}`;
				if (!existsSync(html) && !existsSync(target)) broken.push(`${where} (no page)`);
				else if (hash && !ids.get(html)?.has(decodeURIComponent(hash))) broken.push(`${where} (no anchor)`);
			}
		}
		expect(broken).toEqual([]);
		expect(files.length).toBeGreaterThan(25);
	});

	test("no console errors, no failed requests, no request left the machine", () => {
		expect(problems).toEqual([]);
	});
});

describe("npm run docs", () => {
	let held: Server | undefined;

	afterAll(() => held?.close());

	test("serves a live preview and prints its URL; with the default port 5173 taken, the next free one", async () => {
		held = createServer();
		await new Promise<void>(ok => {
			held?.once("error", () => ok()); // already taken by someone else: just as good
			held?.listen(5173, "localhost", () => ok());
		});
		const proc = spawn({ cmd: ["npm", "run", "docs"], cwd: ROOT, stdout: "pipe", stderr: "pipe", detached: true });
		try {
			let log = "";
			const reader = proc.stdout.getReader();
			const deadline = Date.now() + 120_000;
			let url: string | undefined;
			let pending = reader.read();
			while (!url && Date.now() < deadline) {
				const chunk = await Promise.race([pending, Bun.sleep(1000).then(() => undefined)]);
				if (!chunk) continue;
				if (chunk.done) break;
				log += new TextDecoder().decode(chunk.value);
				url = /Local:\s+(http:\/\/[\w.:-]+\/)/.exec(log)?.[1];
				pending = reader.read();
			}
			expect(log).toContain("Port 5173 is in use, trying another one");
			expect(url).toMatch(/^http:\/\/localhost:(?!5173\/)\d+\/$/);
			const html = await (await fetch(url ?? "")).text();
			expect(html).toContain('<div id="app">');
		} finally {
			process.kill(-proc.pid, "SIGTERM");
			await Promise.race([proc.exited, Bun.sleep(10_000)]);
		}
		expect(proc.killed || proc.exitCode !== null).toBe(true);
	}, 150_000);
});
