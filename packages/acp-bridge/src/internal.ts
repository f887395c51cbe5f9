/** Small helpers the bridge's modules share; not part of the package's API. */

/** How much recent agent text a session keeps for a digest (§6.5). */
export const DIGEST_CHARS = 2000;

/** The number of own enumerable keys of a parsed JSON object, without allocating their list. */
export function keyCount(o: Record<string, unknown>): number {
  let n = 0;
  for (const k in o) if (Object.hasOwn(o, k)) n++;
  return n;
}
