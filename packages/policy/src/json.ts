/** Small JSON value helpers: deep equality and RFC 7396 merge patch (never mutating the input). */

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Deep equality of JSON values (object member order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

const define = (obj: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });

/** Deep copy of a JSON value. */
export function jsonClone<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(jsonClone) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) define(out, k, jsonClone(v));
  return out as T;
}

/**
 * RFC 7396 JSON merge patch: returns a new value; `target` is not modified. A `null` member
 * in the patch removes that member; an object patch merges recursively; anything else replaces.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return jsonClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? jsonClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else define(out, key, applyMergePatch(out[key], value));
  }
  return out;
}
