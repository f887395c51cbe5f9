/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, strings and numbers
 * as `JSON.stringify` writes them. For the values an audit record holds (strings, integers,
 * booleans, null, nested objects and arrays) this is the JSON Canonicalization Scheme
 * (RFC 8785). `undefined` members are left out (as `JSON.stringify` does); anything that has
 * no JSON form (non-finite numbers, bigint, functions, symbols, cycles) is an error.
 *
 * The text is made by `JSON.stringify` (native, about three times faster than building it
 * member by member) of the value itself when its keys are already in order, else of a copy
 * with sorted keys ({@link canonicalValue}). An object with more than one key of which one
 * starts with a digit cannot be handed to `JSON.stringify` that way (it puts array-index keys
 * first, in numeric order): such values are written member by member.
 */
import { AuditError } from "./errors.js";

/** Deeper nesting is treated as a cycle. */
const MAX_DEPTH = 512;

/** Thrown by {@link canonicalValue} for an object whose key order `JSON.stringify` would not keep. */
class NeedsWriter extends Error {}
const NEEDS_WRITER = new NeedsWriter("an object whose keys JSON.stringify would reorder");

/** The canonical JSON text of `value` (see the module comment); throws `NOT_CANONICAL` for values without one. */
export function canonicalJson(value: unknown): string {
  let ready: unknown;
  try {
    ready = canonicalValue(value, 0);
  } catch (error) {
    if (error === NEEDS_WRITER) return write(value, 0);
    throw error;
  }
  return JSON.stringify(ready);
}

/**
 * A value whose `JSON.stringify` is the canonical JSON of `value` (see {@link canonicalValue}),
 * or `undefined` when there is none (an object inside has keys `JSON.stringify` would reorder:
 * use {@link canonicalJson}). Throws `NOT_CANONICAL` for values without a JSON form.
 */
export function stringifiable(value: unknown): unknown {
  try {
    return canonicalValue(value, 1);
  } catch (error) {
    if (error === NEEDS_WRITER) return undefined;
    throw error;
  }
}

/**
 * A value whose `JSON.stringify` is the canonical JSON of `value`: `value` itself when its keys
 * are in order and it holds nothing `JSON.stringify` would write differently, else a copy that
 * is (keys sorted, `toJSON` applied, boxed and other non-plain objects as their own members).
 * Throws `NOT_CANONICAL` for values without a JSON form, and the private `NEEDS_WRITER` for an
 * object whose keys `JSON.stringify` would reorder.
 */
function canonicalValue(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new AuditError("NOT_CANONICAL", `non-finite number ${String(value)} has no JSON form`);
      return value;
    case "object":
      break;
    default:
      throw new AuditError("NOT_CANONICAL", `a ${typeof value} has no JSON form`);
  }
  if (value === null) return null;
  if (depth >= MAX_DEPTH) throw new AuditError("NOT_CANONICAL", "circular or too deeply nested structure has no canonical JSON form");
  if (Array.isArray(value)) {
    // undefined, functions and symbols are null in arrays, for JSON.stringify too.
    let out: unknown[] | undefined =
      typeof (value as { toJSON?: unknown }).toJSON === "function" || Object.getPrototypeOf(value) !== Array.prototype ? [] : undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const ready = item === undefined || typeof item === "function" || typeof item === "symbol" ? null : canonicalValue(item, depth + 1);
      if (out === undefined && ready !== item && !(ready === null && item === undefined)) out = value.slice(0, i) as unknown[];
      out?.push(ready);
    }
    return out ?? value;
  }
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === "function") return canonicalValue(withToJson.toJSON(), depth + 1);
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  const proto: unknown = Object.getPrototypeOf(source);
  let reuse = proto === Object.prototype || proto === null;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const code = key.charCodeAt(0);
    if (code >= 0x30 && code <= 0x39 && keys.length > 1) throw NEEDS_WRITER;
    if (i > 0 && keys[i - 1]! > key) reuse = false;
  }
  if (!reuse) keys.sort();
  let out: Record<string, unknown> | undefined = reuse ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = source[key];
    if (item === undefined) continue;
    const ready = canonicalValue(item, depth + 1);
    if (out === undefined && ready !== item) {
      out = {};
      for (let k = 0; k < i; k++) {
        const earlier = source[keys[k]!];
        if (earlier !== undefined) setMember(out, keys[k]!, earlier);
      }
    }
    if (out !== undefined) setMember(out, key, ready);
  }
  return out ?? value;
}

/** Sets an own enumerable member, `__proto__` included (an assignment would set the prototype). */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The canonical text built member by member (objects whose keys `JSON.stringify` would reorder). */
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
