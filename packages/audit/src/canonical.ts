/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, strings and numbers
 * as `JSON.stringify` writes them. For the values an audit record holds (strings, integers,
 * booleans, null, nested objects and arrays) this is the JSON Canonicalization Scheme
 * (RFC 8785). `undefined` members are left out (as `JSON.stringify` does); anything that has
 * no JSON form (non-finite numbers, bigint, functions, symbols, cycles) is an error.
 */
import { AuditError } from "./errors.js";

export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, parts, new Set());
  return parts.join("");
}

function write(value: unknown, out: string[], stack: Set<object>): void {
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(value)) throw new AuditError("NOT_CANONICAL", `non-finite number ${String(value)} has no JSON form`);
      out.push(JSON.stringify(value));
      return;
    case "object":
      break;
    default:
      throw new AuditError("NOT_CANONICAL", `a ${typeof value} has no JSON form`);
  }
  if (value === null) {
    out.push("null");
    return;
  }
  if (stack.has(value)) throw new AuditError("NOT_CANONICAL", "circular structure has no JSON form");
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") {
    write(withToJson.toJSON(), out, stack);
    return;
  }
  stack.add(value);
  if (Array.isArray(value)) {
    out.push("[");
    value.forEach((item, i) => {
      if (i > 0) out.push(",");
      write(item === undefined || typeof item === "function" || typeof item === "symbol" ? null : item, out, stack);
    });
    out.push("]");
  } else {
    out.push("{");
    let first = true;
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      if (!first) out.push(",");
      first = false;
      out.push(JSON.stringify(key), ":");
      write(item, out, stack);
    }
    out.push("}");
  }
  stack.delete(value);
}
