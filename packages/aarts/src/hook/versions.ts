/** Claude Code versions: how to compare them, and since when a hook's "ask" is honoured. */

/** The first Claude Code version verified to keep a tool call its hook answered "ask" from running in print mode. */
export const CLAUDE_ASK_HONOURED_SINCE = "2.1.332";

/** Compares dotted numeric versions (`2.1.83` < `2.1.332`); non-numeric parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length, 3); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
