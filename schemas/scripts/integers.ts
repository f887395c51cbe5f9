/**
 * Exact integer bounds in the generated JSON Schema.
 *
 * zod's `z.int()` is limited to JavaScript's safe integers, and `toJsonSchemaBundle` drops those
 * limits (they are not protocol rules). The specification's integer kinds are registered as
 * `$defs/U64`, `U32`, `I32` and `I64`; this step writes their true bounds from
 * `INTEGER_WIDTHS` (decimal text). Bounds a JavaScript number cannot hold exactly are kept as
 * `bigint` in memory and written digit for digit by {@link schemaText}.
 */
import { INTEGER_WIDTHS, type JsonSchemaObject } from "../../packages/core/src/index.js";

const DESCRIPTIONS: Record<keyof typeof INTEGER_WIDTHS, string> = {
  U64: "AHP `uint`: an unsigned 64-bit integer, 0 … 18446744073709551615. Values above 2^53 − 1 cannot be represented exactly by a JavaScript number; the TypeScript implementation refuses them.",
  U32: "AHP `u32`: an unsigned 32-bit integer, 0 … 4294967295.",
  I32: "AHP `i32`: a signed 32-bit integer, −2147483648 … 2147483647.",
  I64: "AHP `i64`: a signed 64-bit integer, −9223372036854775808 … 9223372036854775807. Values beyond ±(2^53 − 1) cannot be represented exactly by a JavaScript number; the TypeScript implementation refuses them.",
};

/** A decimal bound as a number when it is exact, else as a bigint. */
function exact(text: string): number | bigint {
  const big = BigInt(text);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** Sets the bounds of the integer kinds in a bundle's `$defs` (in place) and returns the bundle. */
export function applyIntegerWidths<T extends JsonSchemaObject>(bundle: T): T {
  const defs = bundle.$defs as Record<string, JsonSchemaObject> | undefined;
  for (const [name, width] of Object.entries(INTEGER_WIDTHS)) {
    const def = defs?.[name];
    if (def === undefined) throw new Error(`$defs/${name} is missing: register it in AHP_SCHEMA_TYPES`);
    if (def.type !== "integer") throw new Error(`$defs/${name} is not an integer schema`);
    // What zod wrote must lie within the spec's range (it may be narrower only where JavaScript cannot go).
    for (const key of ["minimum", "maximum"] as const) {
      const generated = def[key];
      if (generated !== undefined && (typeof generated !== "number" || !Number.isSafeInteger(generated))) {
        throw new Error(`$defs/${name}.${key} is ${String(generated)}`);
      }
    }
    if (typeof def.minimum === "number" && BigInt(def.minimum) < BigInt(width.minimum))
      throw new Error(`$defs/${name}: zod minimum below spec`);
    if (typeof def.maximum === "number" && BigInt(def.maximum) > BigInt(width.maximum))
      throw new Error(`$defs/${name}: zod maximum above spec`);
    const { type: _t, minimum: _min, maximum: _max, ...rest } = def;
    defs![name] = {
      description: DESCRIPTIONS[name as keyof typeof INTEGER_WIDTHS],
      type: "integer",
      minimum: exact(width.minimum),
      maximum: exact(width.maximum),
      ...rest,
    };
  }
  return bundle;
}

const BIGINT_TOKEN = "\u0000bigint:";

/**
 * Stable JSON text of a schema file: 2-space indentation and a final newline (as `stableJson` of
 * `@ahp/core`), with every `bigint` written as its exact digits.
 */
export function schemaText(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${BIGINT_TOKEN}${v.toString()}` : v), 2);
  return `${text.replace(/"\\u0000bigint:(-?\d+)"/g, "$1")}\n`;
}
