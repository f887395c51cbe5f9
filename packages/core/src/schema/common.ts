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

/**
 * The integer kinds of the specification (§0) with their exact bounds, written as decimal text
 * because two of them lie beyond what a JavaScript number holds exactly. The generated JSON
 * Schema states these bounds (`$defs/U64`, `U32`, `I32`, `I64`); the zod schemas below accept the
 * part of each range that a JavaScript number represents exactly (for `U64` and `I64`: the safe
 * integers, |n| <= 2^53 - 1) and refuse the rest, since `JSON.parse` has already rounded such a
 * value to a different number. See docs/adr/0060-integer-widths.md.
 */
export const INTEGER_WIDTHS = Object.freeze({
  /** Spec `uint`: unsigned 64-bit (the reference's `u64`). */
  U64: Object.freeze({ spec: "uint", minimum: "0", maximum: "18446744073709551615" }),
  /** Spec `u32`. */
  U32: Object.freeze({ spec: "u32", minimum: "0", maximum: "4294967295" }),
  /** Spec `i32`. */
  I32: Object.freeze({ spec: "i32", minimum: "-2147483648", maximum: "2147483647" }),
  /** Spec `i64`. */
  I64: Object.freeze({ spec: "i64", minimum: "-9223372036854775808", maximum: "9223372036854775807" }),
});
/** The integer kinds the specification names (`u32`, `u64`, `i32`, `i64`), keys of {@link INTEGER_WIDTHS}. */
export type IntegerWidth = keyof typeof INTEGER_WIDTHS;

/** `uint`: 0 … 2^64 − 1 on the wire; here 0 … 2^53 − 1 (safe integers). Fractions are rejected. */
export const U64Schema = z.int().min(0);
/** `u32`: 0 … 4 294 967 295. */
export const U32Schema = z.int().min(0).max(4_294_967_295);
/** `i32`: −2 147 483 648 … 2 147 483 647. */
export const I32Schema = z.int().min(-2_147_483_648).max(2_147_483_647);
/** `i64`: −2^63 … 2^63 − 1 on the wire; here the safe integers. */
export const I64Schema = z.int();

/**
 * Every use of a kind is the same schema instance, so the JSON Schema bundle refers to it as
 * `#/$defs/U64` (…) and code generators in other languages can map it to their native type.
 */
export const uint = () => U64Schema;
/** Non-negative integer <= 4 294 967 295. */
export const u32 = () => U32Schema;
/** Signed 32-bit integer. */
export const i32 = () => I32Schema;
/** Signed 64-bit integer (safe-integer range here). */
export const i64 = () => I64Schema;
/** Single-precision float on the reference: any finite JSON number. Compare with a tolerance (~1e-6). */
export const f32 = () => z.number();

/** The message of the issue {@link present} raises; `describeIssues` words it as the missing field it is on the wire. */
export const MISSING_MEMBER = "missing member";

/** The schema {@link present} returns: any JSON value, `null` included, but not `undefined`. */
export const PresentJsonSchema = z.unknown().refine((value): boolean => value !== undefined, { message: MISSING_MEMBER });
/**
 * A member that must be there and may hold any JSON value, `null` included. `undefined` is refused
 * as well as a missing key: JSON has no `undefined`, so the member would be missing on the wire and
 * the peer would refuse the message.
 */
export const present = () => PresentJsonSchema;

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
