// The Chinese side of each reference page: not translated yet, so it says so and links the English page
// (titled by that page's own H1, so a renamed page needs no edit here).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const docs = join(dirname(fileURLToPath(import.meta.url)), "..");
const PAGES = ["protocol", "security", "architecture", "usage", "testing", "performance"];

export default {
	paths() {
		return PAGES.map(page => {
			const title = /^# (.+)$/m.exec(readFileSync(join(docs, `${page}.md`), "utf8"))?.[1] ?? page;
			return {
				params: { page },
				content: `# ${title}\n\n::: info 尚未翻译\n本页尚无中文版。请阅读英文原文：[${title}](../${page}.md)。\n:::\n`,
			};
		});
	},
};
