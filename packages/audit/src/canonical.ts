/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, strings and numbers
 * as `JSON.stringify` writes them. For the values an audit record holds (strings, integers,
 * booleans, null, nested objects and arrays) this is the JSON Canonicalization Scheme
 * (RFC 8785). `undefined` members are left out (as `JSON.stringify` does); anything that has
 * no JSON form (non-finite numbers, bigint, functions, symbols, cycles) is an error.
 */
import { AuditError } from "./errors.js";

/** Deeper nesting is treated as a cycle. */
const MAX_DEPTH = 512;

/** The canonical JSON text of `value` (see the module comment); throws `NOT_CANONICAL` for values without one. */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new AuditError("NOT_CANONICAL", `non-finite number ${String(value)} has no JSON form`);
      return JSON.stringify(value);
    case "object":
      break;
    default:
      throw new AuditError("NOT_CANONICAL", `a ${typeof value} has no JSON form`);
  }
  if (value === null) return "null";
  if (depth >= MAX_DEPTH) throw new AuditError("NOT_CANONICAL", "circular or too deeply nested structure has no canonical JSON form");
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (i > 0) out += ",";
      out += item === undefined || typeof item === "function" || typeof item === "symbol" ? "null" : write(item, depth + 1);
    }
    return `${out}]`;
  }
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") return write(withToJson.toJSON(), depth + 1);
  const keys = Object.keys(value).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${write(item, depth + 1)}`;
    first = false;
  }
  return `${out}}`;
}
