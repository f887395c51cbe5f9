/** The rates both mutation tests print and check: what share of the variants got the decision their source's label asks for, overall and per operator. */

/** Misses of one label's variants, overall and per operator family (`wrapper:env` counts as `wrapper`). */
export interface Rate<V> {
  readonly variants: readonly V[];
  readonly misses: readonly V[];
  readonly byOp: ReadonlyMap<string, { n: number; miss: number }>;
}

/** The variants `decide` does not answer as `wanted`. */
export function rate<V extends { ops: readonly string[] }>(
  variants: readonly V[],
  decide: (v: V) => string,
  wanted: (decision: string) => boolean,
): Rate<V> {
  const misses = variants.filter((v) => !wanted(decide(v)));
  const missed = new Set(misses);
  const byOp = new Map<string, { n: number; miss: number }>();
  for (const v of variants)
    for (const op of new Set(v.ops.map((o) => o.split(":")[0]!))) {
      const e = byOp.get(op) ?? { n: 0, miss: 0 };
      e.n++;
      if (missed.has(v)) e.miss++;
      byOp.set(op, e);
    }
  return { variants, misses, byOp };
}

const perOperator = (m: ReadonlyMap<string, { n: number; miss: number }>) =>
  [...m]
    .sort()
    .map(([op, { n, miss }]) => `${op} ${miss}/${n}`)
    .join(", ");

/**
 * Prints the dangerous variants' catch rate and the everyday ones' stop rate (with `label` and
 * `sources` saying where they come from), per operator, and the first misses as `show` spells
 * them; returns both rates in percent.
 */
export function reportRates<V extends { ops: readonly string[] }>(
  label: string,
  dangerous: Rate<V> & { sources?: string },
  everyday: Rate<V> & { sources?: string },
  show: (v: V) => unknown,
): { caught: number; stopped: number } {
  const caught = 100 * (1 - dangerous.misses.length / dangerous.variants.length);
  const stopped = 100 * (everyday.misses.length / everyday.variants.length);
  process.stdout.write(
    `${label}: dangerous variants ${dangerous.variants.length}${dangerous.sources ?? ""}: caught ${caught.toFixed(1)}%; ` +
      `everyday variants ${everyday.variants.length}${everyday.sources ?? ""}: escalated or blocked ${stopped.toFixed(1)}%\n` +
      `  dangerous missed per operator: ${perOperator(dangerous.byOp)}\n  everyday stopped per operator: ${perOperator(everyday.byOp)}\n`,
  );
  for (const v of dangerous.misses.slice(0, 20)) process.stdout.write(`  missed: ${JSON.stringify(show(v))} (${v.ops.join(", ")})\n`);
  for (const v of everyday.misses.slice(0, 20)) process.stdout.write(`  stopped: ${JSON.stringify(show(v))} (${v.ops.join(", ")})\n`);
  return { caught, stopped };
}
