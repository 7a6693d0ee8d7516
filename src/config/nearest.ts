/** The "did you mean" of an unknown config key: the known key a typo most likely meant. Pure. */

/** Edit distance; keys are short, so the plain table is fine. */
function distance(a: string, b: string): number {
	let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const row = [i];
		for (let j = 1; j <= b.length; j++) {
			row[j] = Math.min(
				(prev[j] ?? 0) + 1,
				(row[j - 1] ?? 0) + 1,
				(prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
			);
		}
		prev = row;
	}
	return prev[b.length] ?? 0;
}

/** The entry of `known` nearest to `key` (case and `-`/`_` ignored, then an edit per 3 characters), or null. */
export function nearestOf(key: string, known: readonly string[]): string | null {
	const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
	const folded = fold(key);
	const scored = known.map(k => ({ k, d: distance(folded, fold(k)) })).sort((x, y) => x.d - y.d);
	const best = scored[0];
	return best && best.d <= Math.min(3, Math.max(1, Math.floor(folded.length / 3))) ? best.k : null;
}
