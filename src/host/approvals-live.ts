/**
 * The approval picture read from the live host: the Main session's settings (the process's global
 * Settings, so `/settings` changes and `--approval-mode` overrides show at once), else the package root's.
 */
import * as ai from "@oh-my-pi/pi-ai";
import * as agent from "@oh-my-pi/pi-coding-agent";
import * as approval from "@oh-my-pi/pi-coding-agent/tools/approval";
import type { BlobMode } from "../config/tokens.ts";
import { errorText } from "../text/error-text.ts";
import { describeApprovals, effectiveMode } from "./approvals.ts";
import { liveMain } from "./main.ts";
import type { HostSession } from "./shapes.ts";
import { type PictureTool, type ResolveApproval, unprompted } from "./unprompted.ts";

interface SettingsLike {
	get(key: string): unknown;
}

const isRecord = (v: unknown): v is object => typeof v === "object" && v !== null && !Array.isArray(v);

/** The tool's parameters as the host describes them on the wire (its ArkType schemas are not JSON Schema). */
function jsonSchema(tool: { name: string; description?: string; parameters?: unknown }): unknown {
	try {
		return ai.toolWireSchema(tool as Parameters<typeof ai.toolWireSchema>[0]);
	} catch {
		return undefined;
	}
}

export function liveApprovals(blob: BlobMode): string[] {
	const main = liveMain() as (HostSession & { settings?: SettingsLike }) | null;
	const source: SettingsLike = main?.settings ?? (agent.settings as unknown as SettingsLike);
	try {
		const mode = source.get("tools.approvalMode");
		const policies = source.get("tools.approval");
		const tools: PictureTool[] = main
			? main.getAllToolNames().flatMap(name => {
					const t = main.getToolByName(name);
					return t ? [{ name, approval: t.approval, parameters: jsonSchema(t) }] : [];
				})
			: [];
		// An export a newer host moved leaves the picture without the list, never stops it.
		const resolveApproval: unknown = approval.resolveApproval;
		const open =
			main && typeof resolveApproval === "function"
				? unprompted(
						tools,
						effectiveMode(mode),
						isRecord(policies) ? policies : {},
						resolveApproval as unknown as ResolveApproval,
					)
				: undefined;
		return describeApprovals(mode, policies, blob, { unprompted: open, bashPatterns: source.get("bash.patterns") });
	} catch (err) {
		const why = errorText(err);
		return [
			`approvals: could not read the host's approval settings (${why})`,
			...describeApprovals("yolo", {}, blob).slice(1),
		];
	}
}
