/**
 * The approval picture read from the live host: the Main session's settings (the process's global
 * Settings, so `/settings` changes and `--approval-mode` overrides show at once), else the package root's.
 */
import { settings } from "@oh-my-pi/pi-coding-agent";
import type { BlobMode } from "../config/tokens.ts";
import { describeApprovals } from "./approvals.ts";
import { liveMain } from "./main.ts";

interface SettingsLike {
	get(key: string): unknown;
}

export function liveApprovals(blob: BlobMode): string[] {
	const main = liveMain() as { settings?: SettingsLike } | null;
	const source: SettingsLike = main?.settings ?? (settings as unknown as SettingsLike);
	try {
		return describeApprovals(source.get("tools.approvalMode"), source.get("tools.approval"), blob);
	} catch (err) {
		const why = err instanceof Error ? err.message : String(err);
		return [
			`approvals: could not read the host's approval settings (${why})`,
			...describeApprovals("yolo", {}, blob).slice(1),
		];
	}
}
