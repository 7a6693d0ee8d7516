/**
 * The forge's copy of each README section a page shows (./sections.ts): the forge renders no include, so the
 * section is written into the page under its `@section` line, its links rewritten to work from the page. The
 * docs test holds every copy equal to what this writes, so a README edit without `npm run docs:copies` fails.
 * `bun docs/.vitepress/copies.ts` writes the copies; with `--check` it only names the pages that differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { anchorHomes, DIRECTIVE, END, pages, section, shownLines } from "./sections.ts";

type Homes = Map<string, Map<string, string>>;

/** `href`, written in `from`, as a link that reaches the same text from `page` on the forge. */
function forgeHref(homes: Homes, page: string, from: string, href: string): string {
	if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href) || (href.startsWith("#") && from === page)) return href;
	const [path = "", hash] = href.split("#", 2);
	const target = path === "" ? from : resolve(dirname(from), path);
	// A README anchor points at the page that shows its section, as on the site; one no page shows stays put.
	const home = (hash && homes.get(target)?.get(decodeURI(hash))) || target;
	if (home === page) return hash ? `#${hash}` : relative(dirname(page), page);
	return `${relative(dirname(page), home)}${hash ? `#${hash}` : ""}`;
}

/** One line of the copy: links outside code spans rewritten from `from`'s point of view to `page`'s. */
function forgeLine(homes: Homes, page: string, from: string, line: string): string {
	return line
		.split(/(`+[^`]*`+)/)
		.map((part, i) =>
			i % 2 === 1
				? part
				: part.replace(/\]\(([^()\s]+)\)/g, (_, href: string) => `](${forgeHref(homes, page, from, href)})`),
		)
		.join("");
}

/** The lines of the copy under a directive: the section as the page shows it, code fences left as written. */
function copyLines(homes: Homes, page: string, file: string, title: string, mode: string | undefined): string[] {
	let fence = false;
	return shownLines(section(file, title), mode).map(line => {
		if (/^\s*(```|~~~)/.test(line)) fence = !fence;
		return fence ? line : forgeLine(homes, page, file, line);
	});
}

/** `text` of `page` with every `@section` followed by its current copy and the end line. */
export function withCopies(root: string, page: string, text: string): string {
	const homes = anchorHomes(root);
	const lines = text.split("\n");
	const out: string[] = [];
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i] ?? "";
		out.push(line);
		const m = DIRECTIVE.exec(line);
		if (!m?.[1] || m[2] === undefined) continue;
		out.push(...copyLines(homes, page, resolve(dirname(page), m[1]), m[2], m[3]), END);
		// The old copy, if any, ends before the next directive; a directive with none gets one.
		const end = lines.findIndex((l, j) => j > i && (l === END || DIRECTIVE.test(l)));
		if (lines[end] === END) i = end;
	}
	return out.join("\n");
}

/** The pages under `root` whose copies differ from what `withCopies` writes; with `write`, rewritten. */
export function staleCopies(root: string, write: boolean): string[] {
	return pages(root).filter(page => {
		const text = readFileSync(page, "utf8");
		if (!text.split("\n").some(l => DIRECTIVE.test(l))) return false;
		const fresh = withCopies(root, page, text);
		if (fresh === text) return false;
		if (write) writeFileSync(page, fresh);
		return true;
	});
}

if (import.meta.main) {
	const root = resolve(dirname(new URL(import.meta.url).pathname), "..");
	const check = process.argv.includes("--check");
	const stale = staleCopies(root, !check);
	for (const page of stale) console.log(`${check ? "stale" : "wrote"} ${relative(process.cwd(), page)}`);
	if (check && stale.length > 0) process.exit(1);
}
