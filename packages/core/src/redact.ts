/**
 * Secret redaction over strings and JSON values.
 *
 * A {@link Redactor} is any `(text) => text` function, so another detector can be passed in place
 * of, or composed with, the built-in {@link redactSecrets}. Replacements read `[REDACTED:<kind>]`.
 */
import { redactText } from "./secrets.js";

/** Replaces secrets inside one string. Must be pure and must not throw. */
export type Redactor = (text: string) => string;

/**
 * Redacts every secret the detector finds (see `findSecrets`: cloud and SaaS keys and tokens,
 * JWTs, PEM private keys, URL credentials, bearer tokens, high-entropy `password=`-style
 * assignments) as `[REDACTED:<kind>]`.
 */
export const redactSecrets: Redactor = (text) => redactText(text);

/** Object keys whose values are replaced wholesale in {@link redactValue}. */
export const SENSITIVE_KEY =
  /^(?:password|passwd|pwd|passphrase|secret|client_?secret|token|access_?token|refresh_?token|id_?token|auth_?token|api_?key|apikey|access_?key|secret_?access_?key|private_?key|authorization|proxy_?authorization|cookie|set_?cookie|credentials?|session_?token)$/i;

/** Applies several redactors in order. */
export function composeRedactors(...redactors: readonly Redactor[]): Redactor {
  return (text) => redactors.reduce((acc, r) => r(acc), text);
}

/**
 * Returns a redacted deep copy of a JSON-like value: strings pass through `redactor`, values
 * under sensitive keys (`password`, `token`, `authorization`, ...) become `[REDACTED:<key>]`.
 * Cycles and depth beyond `maxDepth` are replaced by a marker instead of recursing.
 */
export function redactValue(value: unknown, redactor: Redactor = redactSecrets, maxDepth = 64): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === "string") return redactor(v);
    if (v === null || typeof v !== "object") return v;
    if (depth >= maxDepth) return "[TRUNCATED:depth]";
    if (seen.has(v)) return "[CIRCULAR]";
    seen.add(v);
    try {
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        if (SENSITIVE_KEY.test(key.replace(/-/g, "_")) && item !== null && item !== undefined && item !== "") {
          out[key] = `[REDACTED:${key.toLowerCase()}]`;
        } else {
          out[key] = walk(item, depth + 1);
        }
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}
