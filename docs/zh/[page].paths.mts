// The contributor pages (how the code is built, tested and measured) are kept in English only; their Chinese
// route says so and links the English page, titled by that page's own H1 so a renamed page needs no edit here.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const docs = join(dirname(fileURLToPath(import.meta.url)), "..");
export const CONTRIBUTOR_PAGES = ["architecture", "testing", "performance"];

export default {
	paths() {
		return CONTRIBUTOR_PAGES.map(page => {
			const title = /^# (.+)$/m.exec(readFileSync(join(docs, `${page}.md`), "utf8"))?.[1] ?? page;
			return {
				params: { page },
				content: `# ${title}\n\n::: info 贡献者页面，只有英文版\n本页写给修改本项目代码的贡献者（代码结构、测试、性能测量），按约定只保留英文版，不会翻译。使用桥接器所需的一切都有中文页面：[安装与运行](./guide/install.md)、[安全](./security.md)、[使用](./usage.md)、[线上协议](./protocol.md)。英文原文：[${title}](../${page}.md)。\n:::\n`,
			};
		});
	},
};
