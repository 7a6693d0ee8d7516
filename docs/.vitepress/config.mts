/**
 * The docs site (`npm run docs`, `npm run docs:build`): the README pair and docs/*.md as pages, English at /
 * and Simplified Chinese at /zh/. Guide pages show README sections in place (./sections.ts), so each fact keeps
 * one home. Dead internal links fail the build (VitePress's default: `ignoreDeadLinks` stays unset).
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type DefaultTheme, defineConfig, type MarkdownRenderer } from "vitepress";
import { githubSlug, sections } from "./sections.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** ```mermaid fences become <MermaidDiagram>, drawn as SVG in the browser (theme/mermaid.ts). */
function mermaidFences(md: MarkdownRenderer): void {
	const fence = md.renderer.rules.fence;
	md.renderer.rules.fence = (tokens, idx, options, env, self) => {
		const token = tokens[idx];
		if (token?.info.trim() === "mermaid") return `<MermaidDiagram code="${encodeURIComponent(token.content)}" />\n`;
		return fence ? fence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
	};
}

type Labels = { guide: string; reference: string; pages: Record<string, string> };

const REFERENCE = ["protocol", "security", "architecture", "usage", "testing", "performance"];
const GUIDE = [
	"install",
	"upgrade",
	"uninstall",
	"clients",
	"lab",
	"service",
	"configuration",
	"environment",
	"read-only",
	"phone",
	"blob",
	"long-work",
	"takeover",
	"errors",
	"troubleshooting",
	"platforms",
];

function sidebar(prefix: string, l: Labels): DefaultTheme.SidebarItem[] {
	const item = (path: string) => ({ text: l.pages[path] ?? path, link: `${prefix}${path}` });
	return [
		{ text: l.guide, items: GUIDE.map(p => item(`guide/${p}`)) },
		{ text: l.reference, items: REFERENCE.map(item) },
	];
}

const EN: Labels = {
	guide: "Guide",
	reference: "Reference",
	pages: {
		"guide/install": "Install and run",
		"guide/upgrade": "Upgrade",
		"guide/uninstall": "Uninstall",
		"guide/environment": "Environment variables",
		"guide/errors": "Errors and what to do",
		"guide/platforms": "Supported platforms",
		"guide/clients": "Connecting clients",
		"guide/lab": "The lab box",
		"guide/service": "Run the host as a service",
		"guide/configuration": "Commands and configuration",
		"guide/read-only": "Read-only setup",
		"guide/phone": "Approve from your phone",
		"guide/blob": "Moving files: /blob",
		"guide/long-work": "Long work",
		"guide/takeover": "Host inference takeover",
		"guide/troubleshooting": "Troubleshooting",
		protocol: "Wire protocol",
		security: "Security",
		architecture: "Architecture",
		usage: "Usage",
		testing: "Testing",
		performance: "Performance",
	},
};

const ZH: Labels = {
	guide: "指南",
	reference: "参考",
	pages: {
		"guide/install": "安装与运行",
		"guide/upgrade": "升级",
		"guide/uninstall": "卸载",
		"guide/environment": "环境变量",
		"guide/errors": "错误与处理",
		"guide/platforms": "支持的平台",
		"guide/clients": "连接客户端与首次调用",
		"guide/lab": "实验室机器",
		"guide/service": "以服务方式运行宿主",
		"guide/configuration": "命令与配置",
		"guide/read-only": "只读配置",
		"guide/phone": "在手机上审批",
		"guide/blob": "传输文件：/blob",
		"guide/long-work": "长时间任务",
		"guide/takeover": "宿主推理接管",
		"guide/troubleshooting": "故障排查",
		protocol: "线上协议",
		security: "安全",
		architecture: "架构",
		usage: "使用",
		testing: "测试",
		performance: "性能",
	},
};

export default defineConfig({
	title: "pi-a2a-ext",
	description: "An MCP endpoint inside a running omp host",
	lastUpdated: false,
	head: [["link", { rel: "icon", type: "image/svg+xml", href: "/logo.svg" }]],
	markdown: {
		anchor: { slugify: githubSlug },
		config: md => {
			md.use(sections(root));
			mermaidFences(md);
		},
	},
	vite: { build: { chunkSizeWarningLimit: 4096 } },
	themeConfig: {
		logo: "/logo.svg",
		search: {
			provider: "local",
			options: {
				locales: {
					zh: {
						translations: {
							button: { buttonText: "搜索", buttonAriaLabel: "搜索" },
							modal: {
								noResultsText: "没有结果",
								resetButtonTitle: "清除",
								footer: { selectText: "选择", navigateText: "切换", closeText: "关闭" },
							},
						},
					},
				},
			},
		},
	},
	locales: {
		root: {
			label: "English",
			lang: "en-US",
			themeConfig: {
				nav: [
					{ text: EN.guide, link: "/guide/install" },
					{ text: EN.reference, link: "/protocol" },
				],
				sidebar: sidebar("/", EN),
			},
		},
		zh: {
			label: "简体中文",
			lang: "zh-CN",
			link: "/zh/",
			description: "在运行中的 omp 宿主内提供 MCP 端点",
			themeConfig: {
				nav: [
					{ text: ZH.guide, link: "/zh/guide/install" },
					{ text: ZH.reference, link: "/zh/protocol" },
				],
				sidebar: sidebar("/zh/", ZH),
				outline: { label: "本页内容" },
				docFooter: { prev: "上一页", next: "下一页" },
				langMenuLabel: "语言",
				returnToTopLabel: "回到顶部",
				sidebarMenuLabel: "菜单",
				darkModeSwitchLabel: "外观",
			},
		},
	},
});
