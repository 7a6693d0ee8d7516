// A ```mermaid fence (see ../config.mts) drawn as SVG in the browser. mermaid is bundled into the site, so it
// draws offline; until it has drawn (and without JavaScript) the diagram's source shows.
import { useData } from "vitepress";
import { defineComponent, h, onMounted, ref, watch } from "vue";

let drawn = 0;

export const MermaidDiagram = defineComponent({
	name: "MermaidDiagram",
	props: { code: { type: String, required: true } },
	setup(props) {
		const source = decodeURIComponent(props.code);
		const svg = ref("");
		const { isDark } = useData();
		async function draw(): Promise<void> {
			const { default: mermaid } = await import("mermaid");
			mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: isDark.value ? "dark" : "default" });
			drawn++;
			svg.value = (await mermaid.render(`mermaid-diagram-${drawn}`, source)).svg;
		}
		onMounted(draw);
		watch(isDark, draw);
		return () =>
			svg.value
				? h("div", { class: "mermaid-diagram", innerHTML: svg.value })
				: h("pre", { class: "mermaid-source" }, h("code", source));
	},
});
