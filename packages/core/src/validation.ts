/**
 * Decoding with readable error details. The AHP error catalogue fixes the message *prefixes*
 * (`Invalid params: `, `Invalid event: Serialization error: `, ...); the detail after them is
 * this module's wording, close to what the reference prints ("missing field `x`",
 * "unknown variant `y`, expected one of ...").
 */
import type { z } from "zod";
import { MISSING_MEMBER } from "./schema/common.js";

/** What {@link decode} returns: the parsed value, or a one-line `detail` in the reference's wording and the zod issues. */
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; detail: string; issues: readonly z.core.$ZodIssue[] };

/**
 * Parses `value` with `schema` without throwing: `{ok: true, value}`, or `{ok: false}` with a one-line `detail` in the reference's
 * wording ("missing field `x`") and zod's issues.
 */
export function decode<S extends z.ZodType>(schema: S, value: unknown): DecodeResult<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, detail: describeIssues(result.error.issues, value), issues: result.error.issues };
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key as string];
  }
  return current;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a sequence";
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case "number":
      return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
    case "boolean":
      return `boolean \`${value}\``;
    case "object":
      return "a map";
    default:
      return typeof value;
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out.length === 0 ? String(key) : `.${String(key)}`;
  return out;
}

/** One line naming the first problem and where it is, e.g. "missing field `capabilities` at agent_info.capabilities". */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: unknown): string {
  const issue = issues[0];
  if (issue === undefined) return "invalid value";
  const path = issue.path;
  const where = path.length > 0 ? ` at ${formatPath(path)}` : "";
  const last = path[path.length - 1];
  const input = valueAt(root, path);
  switch (issue.code) {
    case "invalid_type": {
      const parentExists = path.length === 0 || valueAt(root, path.slice(0, -1)) !== undefined;
      if (input === undefined && parentExists && last !== undefined) return `missing field \`${String(last)}\`${where}`;
      return `invalid type: ${jsonType(input)}, expected ${issue.expected}${where}`;
    }
    case "invalid_value": {
      if (input === undefined && last !== undefined && valueAt(root, path.slice(0, -1)) !== undefined) {
        return `missing field \`${String(last)}\`${where}`;
      }
      const expected = issue.values.map((v) => `\`${String(v)}\``).join(", ");
      if (typeof input === "string") return `unknown variant \`${input}\`, expected one of ${expected}${where}`;
      return `invalid value: ${jsonType(input)}, expected one of ${expected}${where}`;
    }
    case "invalid_union": {
      if (input === undefined && last !== undefined) return `missing field \`${String(last)}\`${where}`;
      const disc = (issue as { discriminator?: string }).discriminator;
      if (disc !== undefined && input !== null && typeof input === "object") {
        const tag = (input as Record<string, unknown>)[disc];
        if (tag === undefined) return `missing field \`${disc}\`${where}`;
        return `unknown variant \`${String(tag)}\` of \`${disc}\`${where}`;
      }
      if (issue.errors.length === 0 && typeof input === "string") return `unknown variant \`${input}\`${where}`;
      // Report the branch that got furthest; when every branch failed at its surface (wrong or
      // missing keys), name the keys that were given instead of guessing a branch.
      const branches = issue.errors.filter((b) => b.length > 0);
      const shallow = (b: readonly z.core.$ZodIssue[]) =>
        b[0] !== undefined && (b[0].code === "unrecognized_keys" || b[0].path.length <= 1);
      if (input !== null && typeof input === "object" && !Array.isArray(input) && branches.length > 0 && branches.every(shallow)) {
        const keys = Object.keys(input)
          .map((k) => `\`${k}\``)
          .join(", ");
        return `data did not match any variant (given members: ${keys || "none"})${where}`;
      }
      const best = branches.sort((a, b) => depthOf(b) - depthOf(a))[0];
      if (best !== undefined && depthOf(best) > 0) {
        return describeIssues(
          best.map((i) => ({ ...i, path: [...path, ...i.path] })),
          root,
        );
      }
      return `data did not match any variant${where}`;
    }
    case "unrecognized_keys":
      return `unknown field \`${issue.keys[0] ?? ""}\`${where}`;
    case "too_small":
    case "too_big":
      return `invalid value: ${jsonType(input)}, ${issue.message.replace(/^Too (small|big): /, "")}${where}`;
    case "custom":
      // A member that is there but `undefined` (see `present` in schema/common.ts) is missing on the wire.
      if (issue.message === MISSING_MEMBER && last !== undefined) return `missing field \`${String(last)}\`${where}`;
      return `${issue.message}${where}`;
    default:
      return `${issue.message}${where}`;
  }
}

function depthOf(issues: readonly z.core.$ZodIssue[]): number {
  return Math.max(0, ...issues.map((i) => (i.code === "invalid_type" && i.path.length === 0 ? 0 : i.path.length + 1)));
}
