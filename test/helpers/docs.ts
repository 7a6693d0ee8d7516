/**
 * The shell blocks of the docs, as the docs test and .ci/run read them: continuation lines joined,
 * comments dropped. Run directly, it prints the first block of a file whose first command matches a
 * pattern (and holds a string), so .ci/run can execute the README's own text:
 * `bun test/helpers/docs.ts README.md '^TOKEN=' '"method":"initialize"'`.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..", "..");

export interface Command {
	where: string;
	text: string;
}

/** Whether a single-quoted string is still open at the end of `text` (double quotes and escapes honoured). */
function openQuote(text: string): boolean {
	let q: "'" | '"' | undefined;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (q === "'") {
			if (c === "'") q = undefined;
		} else if (c === "\\") i++;
		else if (q === '"') {
			if (c === '"') q = undefined;
		} else if (c === "'" || c === '"') q = c;
	}
	return q === "'";
}

/** Commands of each shell block: continuation lines joined, comments dropped. */
export function shellBlocks(file: string): Command[][] {
	const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
	const blocks: Command[][] = [];
	for (let i = 0; i < lines.length; i++) {
		if (!/^```(sh|bash|shell)\s*$/.test(lines[i] ?? "")) continue;
		const block: Command[] = [];
		let pending: Command | undefined;
		for (i++; i < lines.length && !(lines[i] ?? "").startsWith("```"); i++) {
			const raw = (lines[i] ?? "").replace(/\s+# .*$/, "").trim();
			if (raw === "" || raw.startsWith("#")) continue;
			// A trailing backslash continues the line (the shell drops it with the newline); an open single
			// quote continues it too, keeping the newline, which is part of the quoted text.
			const text = !pending
				? raw
				: openQuote(pending.text)
					? `${pending.text}\n${raw}`
					: `${pending.text.replace(/\s*\\$/, "")} ${raw}`;
			const cmd = { where: pending?.where ?? `${file}:${i + 1}`, text };
			pending = /(\||\\|&&)$/.test(raw) || openQuote(text) ? cmd : undefined;
			if (!pending) block.push(cmd);
		}
		blocks.push(block);
	}
	return blocks;
}

/**
 * The first Markdown table after `heading` (a line of the file, e.g. `### Errors`) whose header row
 * starts with `firstColumn`: one record per body row, keyed by the header cells. Throws when missing,
 * so a renamed heading fails the test that reads the table instead of comparing nothing.
 */
export function markdownTable(file: string, heading: string, firstColumn: string): Array<Record<string, string>> {
	const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
	const from = lines.indexOf(heading);
	if (from < 0) throw new Error(`${file}: no line '${heading}'`);
	const cells = (line: string) =>
		line
			.trim()
			.replace(/^\||\|$/g, "")
			.split("|")
			.map(c => c.trim());
	const start = lines.findIndex((l, i) => i > from && l.startsWith("|") && cells(l)[0] === firstColumn);
	if (start < 0) throw new Error(`${file}: no table with first column '${firstColumn}' after '${heading}'`);
	const header = cells(lines[start] ?? "");
	const rows: Array<Record<string, string>> = [];
	for (let i = start + 2; i < lines.length && (lines[i] ?? "").startsWith("|"); i++) {
		const row = cells(lines[i] ?? "");
		rows.push(Object.fromEntries(header.map((h, j) => [h, row[j] ?? ""])));
	}
	return rows;
}

if (import.meta.main) {
	const [file, pattern, containing = ""] = process.argv.slice(2);
	const re = new RegExp(pattern ?? "^$");
	const block = file
		? shellBlocks(file).find(b => b[0] && re.test(b[0].text) && b.some(c => c.text.includes(containing)))
		: undefined;
	if (!block) {
		process.stderr.write(`docs: no shell block in ${file} starts with /${pattern}/ and holds '${containing}'\n`);
		process.exit(1);
	}
	process.stdout.write(`${block.map(c => c.text).join("\n")}\n`);
}
