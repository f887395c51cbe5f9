/**
 * Building blocks for the wire schemas. Each helper encodes one presence marker or number
 * kind of the AHP specification (§0):
 *
 * | marker    | receiving                                   | helper            |
 * |-----------|---------------------------------------------|-------------------|
 * | req       | present and non-null                        | the schema itself |
 * | opt       | absent or null both mean "not set"          | `opt(s)`          |
 * | opt-null  | as opt (the reference emits `null`)         | `opt(s)`          |
 * | dflt(x)   | absent -> x; explicit null rejected         | `dflt(s, x)`      |
 * | list0     | absent -> []; explicit null rejected        | `list0(s)`        |
 */
import { z } from "zod";

/** Non-negative integer (`uint`, a u64 on the reference; safe-integer range here). Fractions are rejected. */
export const uint = () => z.int().min(0);
/** Non-negative integer <= 4 294 967 295. */
export const u32 = () => z.int().min(0).max(4_294_967_295);
/** Signed 32-bit integer. */
export const i32 = () => z.int().min(-2_147_483_648).max(2_147_483_647);
/** Signed 64-bit integer (safe-integer range here). */
export const i64 = () => z.int();
/** Single-precision float on the reference: any finite JSON number. Compare with a tolerance (~1e-6). */
export const f32 = () => z.number();

/** `opt` / `opt-null`: absent or `null`. */
export const opt = <T extends z.ZodType>(schema: T) => schema.nullish();

/** `dflt(x)`: absent becomes `x`; an explicit `null` is rejected. */
export const dflt = <T extends z.ZodType>(schema: T, value: z.output<T>) =>
  // zod's default() takes the output type; the cast keeps the helper generic.
  (schema as z.ZodType).default(value as never) as unknown as z.ZodDefault<T>;

/** `list0`: an array; absent becomes `[]`; an explicit `null` is rejected. */
export const list0 = <T extends z.ZodType>(item: T) => z.array(item).default([]);

/** `map`: a JSON object with string keys and arbitrary values. */
export const JsonMapSchema = z.record(z.string(), z.unknown());

/** An enumeration that also has one custom variant carried as a single-member object, e.g. `{"custom":"x"}`. */
export const enumWithCustom = <const V extends readonly [string, ...string[]], K extends string>(values: V, customKey: K) =>
  z.union([z.enum(values), z.strictObject({ [customKey]: z.string() } as Record<K, z.ZodString>)]);
