/** Whether the bridge would refuse an upload to `path` as its own (blob/place.ts walks there): why, or null. */
import { reach, release } from "../../src/blob/place.ts";

export function ownPathOf(path: string, own: readonly string[]): string | null {
	const r = reach(path, own, () => {});
	if (r.ok) {
		release(r.place);
		return null;
	}
	return r.code === "own_file" ? r.why : null;
}
