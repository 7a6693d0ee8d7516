/**
 * README sections on the site and the forge, each kept in one home. A page line `<!-- @section ../README.md >
 * Quick start -->` stands for the README section whose heading starts with that text: the heading and everything
 * up to the next heading of the same or a higher level (for the H1, its opening text only). A trailing `| page`
 * makes the section the page (its heading an H1, each subheading one level up), `| body` leaves its heading out.
 * The page holds a copy of it up to `<!-- @end-section -->` so the forge shows it (./copies.ts writes it); the
 * site ignores the copy and shows the section afresh, its links rewritten from their file's point of view to the
 * site's: `docs/x.md` to `/x.md`, `#anchor` and `README.md#anchor` to the page that shows that section, other
 * repository files to plain text. A missing file, section, anchor or end line fails the build.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { MarkdownRenderer as MarkdownIt } from "vitepress";

export const DIRECTIVE = /^<!--\s*@section\s+(\S+)\s*>\s*(.*?)\s*(?:\|\s*(page|body)\s*)?-->\s*$/;
export const END = "<!-- @end-section -->";
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/** GitHub's heading ids (lower case; letters, digits, `_`, `-` kept; spaces to `-`), so forge and site anchors agree. */
export function githubSlug(text: string): string {
	return text
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
		.replace(/ /g, "-");
}

/** Heading text as GitHub slugs it: inline code marks and link targets dropped. */
const headingText = (raw: string): string => raw.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1");

interface Heading {
	line: number;
	level: number;
	text: string;
	slug: string;
}

/** The headings of a markdown file outside code fences, with GitHub's numbering of repeated slugs. */
function headings(lines: string[]): Heading[] {
	const out: Heading[] = [];
	const seen = new Map<string, number>();
	let fence = false;
	lines.forEach((line, i) => {
		if (/^(```|~~~)/.test(line)) fence = !fence;
		const m = fence ? null : HEADING.exec(line);
		if (!m?.[1] || m[2] === undefined) return;
		const base = githubSlug(headingText(m[2]));
		const n = seen.get(base) ?? 0;
		seen.set(base, n + 1);
		out.push({ line: i, level: m[1].length, text: m[2], slug: n === 0 ? base : `${base}-${n}` });
	});
	return out;
}

interface Section {
	lines: string[];
	/** Indexes in `lines` of the section's headings. */
	heads: number[];
	slugs: string[];
}

/** The section of `file` whose heading starts with `title`; throws naming the file and title when there is none. */
export function section(file: string, title: string): Section {
	const lines = readFileSync(file, "utf8").split("\n");
	const all = headings(lines);
	const at = all.findIndex(h => h.text.startsWith(title));
	const head = all[at];
	if (!head) throw new Error(`@section: no heading starting with '${title}' in ${file}`);
	const next = all.slice(at + 1).find(h => h.level <= Math.max(head.level, 2));
	const end = next?.line ?? lines.length;
	const inside = all.filter(h => h.line >= head.line && h.line < end);
	return {
		lines: lines.slice(head.line, end),
		heads: inside.map(h => h.line - head.line),
		slugs: inside.map(h => h.slug),
	};
}

/** Every markdown page under the site root. */
export function pages(root: string): string[] {
	return readdirSync(root).flatMap(name => {
		if (name.startsWith(".")) return [];
		const path = join(root, name);
		if (statSync(path).isDirectory()) return pages(path);
		return name.endsWith(".md") ? [path] : [];
	});
}

/** For each shown file, which page shows each of its anchors. */
export function anchorHomes(root: string): Map<string, Map<string, string>> {
	const homes = new Map<string, Map<string, string>>();
	for (const page of pages(root)) {
		for (const line of readFileSync(page, "utf8").split("\n")) {
			const m = DIRECTIVE.exec(line);
			if (!m?.[1] || m[2] === undefined) continue;
			const file = resolve(dirname(page), m[1]);
			const map = homes.get(file) ?? new Map<string, string>();
			for (const slug of section(file, m[2]).slugs) if (!map.has(slug)) map.set(slug, page);
			homes.set(file, map);
		}
	}
	return homes;
}

interface Origin {
	file: string;
	from: number;
	to: number;
}

interface Env {
	path?: string;
	includes?: string[];
	a2aOrigins?: Origin[];
}

/** Site href for `href` written in `from` and shown on `page`, or undefined for a file the site does not have. */
function siteHref(root: string, page: string, from: string, href: string): string | undefined {
	if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return href;
	// markdown-it percent-encodes hrefs; slugs and paths are compared as written.
	const [path = "", hash] = decodeURI(href).split("#", 2);
	const target = path === "" ? from : resolve(dirname(from), path);
	// A link to the page that shows it (a README section linking the guide page it appears on) stays on the page.
	if (target === page) return hash ? `#${hash}` : `/${relative(root, page)}`;
	const homes = anchorHomes(root).get(target);
	if (homes) {
		const home = hash ? homes.get(hash) : undefined;
		if (hash && !home) throw new Error(`@section: link '${href}' in ${from}: no page shows anchor #${hash}`);
		if (!home) return target.endsWith("README_ZN.md") ? "/zh/" : "/";
		return home === page ? `#${hash}` : `/${relative(root, home)}#${hash}`;
	}
	const rel = relative(root, target);
	if (rel.startsWith("..")) return undefined;
	return `/${rel}${hash ? `#${hash}` : ""}`;
}

/** A section's lines as a page shows them: whole, as the page (`page`) or without its heading (`body`). */
export function shownLines(s: Section, mode: string | undefined): string[] {
	if (mode === "body") return s.lines.slice(1);
	if (mode !== "page") return s.lines;
	return s.lines.map((line, i) => (s.heads.includes(i) ? line.slice(1) : line));
}

/** A page's text with every `@section` line replaced by the lines it shows (what a reader gets, before rendering). */
export function expandSections(page: string, text: string = readFileSync(page, "utf8")): string {
	const lines = text.split("\n");
	const out: string[] = [];
	for (let i = 0; i < lines.length; i++) {
		const m = DIRECTIVE.exec(lines[i] ?? "");
		if (!m?.[1] || m[2] === undefined) {
			out.push(lines[i] ?? "");
			continue;
		}
		out.push(...shownLines(section(resolve(dirname(page), m[1]), m[2]), m[3]));
		i = copyEnd(page, lines, i);
	}
	return out.join("\n");
}

/** The index of the end line of the copy that follows the directive at `at`; throws when it has none. */
function copyEnd(page: string, lines: string[], at: number): number {
	for (let i = at + 1; i < lines.length; i++) {
		if (lines[i] === END) return i;
		if (DIRECTIVE.test(lines[i] ?? "")) break;
	}
	throw new Error(`@section on line ${at + 1} of ${page} has no copy ending '${END}': run npm run docs:copies`);
}

/** The markdown-it plugin: expands `@section` lines, then rewrites the links of the text each came from. */
export function sections(root: string) {
	return (md: MarkdownIt): void => {
		md.core.ruler.before("normalize", "a2a_sections", state => {
			const env = state.env as Env;
			if (!env.path) return;
			const page = env.path;
			const out: string[] = [];
			const origins: Origin[] = [];
			const lines = state.src.split("\n");
			for (let i = 0; i < lines.length; i++) {
				const m = DIRECTIVE.exec(lines[i] ?? "");
				if (!m?.[1] || m[2] === undefined) {
					out.push(lines[i] ?? "");
					continue;
				}
				// The copy under the line is the forge's; the site shows the section itself, once.
				i = copyEnd(page, lines, i);
				const file = resolve(dirname(page), m[1]);
				const shown = shownLines(section(file, m[2]), m[3]);
				origins.push({ file, from: out.length, to: out.length + shown.length });
				out.push(...shown);
				env.includes?.push(file);
			}
			env.a2aOrigins = origins;
			state.src = out.join("\n");
		});
		md.core.ruler.after("inline", "a2a_links", state => {
			const env = state.env as Env;
			if (!env.path) return;
			const page = env.path;
			let line = -1;
			for (const block of state.tokens) {
				// Table cells carry no line map: they take the last one seen (their table's or row's).
				line = block.map?.[0] ?? line;
				if (!block.children) continue;
				const from = env.a2aOrigins?.find(o => line >= o.from && line < o.to)?.file ?? page;
				const kept = [];
				let dropping = false;
				for (const t of block.children) {
					if (t.type === "link_open") {
						const href = t.attrGet("href") ?? "";
						const site = href.startsWith("#") && from === page ? href : siteHref(root, page, from, href);
						dropping = site === undefined;
						if (site !== undefined) t.attrSet("href", site);
					}
					// A dropped link keeps its text; markdown has no nested links, so its close is the next one.
					if ((t.type === "link_open" || t.type === "link_close") && dropping) {
						if (t.type === "link_close") dropping = false;
						continue;
					}
					kept.push(t);
				}
				block.children = kept;
			}
		});
	};
}
