/**
 * Field paths (`payload.arguments.command`, `context.session_stats.total_tokens`,
 * `payload.files.*.path`) compiled once into accessors. Only own members are followed, so a
 * path can never reach `constructor` or `__proto__` of an object.
 */

export const PATH_ROOTS = ["payload", "context", "metadata", "event_type", "session_id", "agent_id", "timestamp", "depth"] as const;

export interface CompiledPath {
  readonly text: string;
  /** True when a `*` segment makes the path yield several values. */
  readonly multi: boolean;
  /** The value (first one for multi paths), or undefined. */
  get(root: unknown): unknown;
  /** Every value the path reaches (absent ones are skipped). */
  collect(root: unknown, out: unknown[]): void;
}

const INDEX = /^(0|[1-9]\d*)$/;

/**
 * One member step. Most members a field list names are absent, so the member is read first
 * and its ownership checked only when it holds a value.
 */
export function step(value: unknown, key: string): unknown {
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) return INDEX.test(key) ? value[Number(key)] : undefined;
  const v = (value as Record<string, unknown>)[key];
  return v !== undefined && Object.hasOwn(value, key) ? v : undefined;
}

/** Compiles a dot path; throws a readable Error when it is malformed. */
export function compilePath(text: string): CompiledPath {
  const segments = text.split(".");
  if (segments.some((s) => s.length === 0)) throw new Error(`invalid field path \`${text}\`: empty segment`);
  const root = segments[0]!;
  if (!(PATH_ROOTS as readonly string[]).includes(root)) {
    throw new Error(`invalid field path \`${text}\`: it must start with one of ${PATH_ROOTS.join(", ")}`);
  }
  if (segments.length > 1 && root !== "payload" && root !== "context" && root !== "metadata") {
    throw new Error(`invalid field path \`${text}\`: \`${root}\` has no members`);
  }
  const multi = segments.includes("*");
  const collect = (value: unknown, index: number, out: unknown[]): void => {
    if (value === undefined) return;
    if (index === segments.length) {
      out.push(value);
      return;
    }
    const key = segments[index]!;
    if (key === "*") {
      if (Array.isArray(value)) for (const item of value) collect(item, index + 1, out);
      else if (value !== null && typeof value === "object") for (const item of Object.values(value)) collect(item, index + 1, out);
      return;
    }
    collect(step(value, key), index + 1, out);
  };
  return {
    text,
    multi,
    get(event) {
      if (multi) {
        const out: unknown[] = [];
        collect(event, 0, out);
        return out[0];
      }
      let value: unknown = event;
      for (let i = 0; i < segments.length && value !== undefined; i++) value = step(value, segments[i]!);
      return value;
    },
    collect(event, out) {
      collect(event, 0, out);
    },
  };
}
