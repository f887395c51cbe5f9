/**
 * Secret redaction over strings and JSON values.
 *
 * A {@link Redactor} is any `(text) => text` function, so a detector from another package (for
 * example a policy engine's `redactSecrets`) can be passed in place of, or composed with, the
 * built-in {@link redactSecrets}. Replacements read `[REDACTED:<kind>]`.
 */

/** Replaces secrets inside one string. Must be pure and must not throw. */
export type Redactor = (text: string) => string;

interface SecretPattern {
  readonly kind: string;
  readonly regex: RegExp;
  /** Index of the capture group holding the secret; the whole match when absent. */
  readonly group?: number;
}

/**
 * Built-in patterns, most specific first. Every regex is linear (no nested quantifiers over
 * overlapping classes) so that redaction cannot be used for a ReDoS.
 */
export const SECRET_PATTERNS: readonly SecretPattern[] = Object.freeze([
  {
    kind: "private_key",
    regex: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: "jwt", regex: /\beyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g },
  { kind: "aws_access_key_id", regex: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b/g },
  {
    kind: "aws_secret_access_key",
    regex: /\baws_?secret_?(?:access_?)?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
  },
  { kind: "github_token", regex: /\bgithub_pat_[A-Za-z0-9_]{22,255}/g },
  { kind: "github_token", regex: /\bgh[pousr]_[A-Za-z0-9]{30,255}\b/g },
  { kind: "gitlab_token", regex: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "slack_token", regex: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g },
  { kind: "stripe_key", regex: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: "google_api_key", regex: /\bAIza[0-9A-Za-z_-]{35}/g },
  { kind: "anthropic_key", regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai_key", regex: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: "bearer_token", regex: /\b(?:Bearer|Basic)\s+([A-Za-z0-9._~+/-]{8,}=*)/g, group: 1 },
  { kind: "url_credentials", regex: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@/gi, group: 1 },
  {
    kind: "assignment",
    // password=..., api_key: "...", "secret": "..." (JSON text), --token=...
    regex:
      /\b(?:password|passwd|pwd|passphrase|secret|client_?secret|token|access_?token|refresh_?token|auth_?token|api_?key|apikey|access_?key|private_?key)\b["']?\s*[:=]\s*(?:"([^"\s]{1,512})"|'([^'\s]{1,512})'|([^\s"'&,;]{1,512}))/gi,
  },
] satisfies SecretPattern[]);

/** Every pattern above contains one of these: a string matching neither has no secret (fast path). */
const CANDIDATE =
  /-----BEGIN|eyJ|(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}|gh[pousr]_|github_pat_|glpat-|xox[a-z]-|[sr]k_(?:live|test)_|AIza|sk-/;
const CANDIDATE_ANY_CASE = /aws|bearer|basic|:\/\/[^\s/@]*:[^\s@]*@|pass|pwd|secret|token|key/i;

const ASSIGNMENT_VALUE = /^((?:[^:=]*?)[:=]\s*["']?)([\s\S]*?)(["']?)$/;

/**
 * Redacts well-known secret formats in `text`: AWS access key ids and secret keys, GitHub
 * (`ghp_`, `gho_`, `github_pat_`), GitLab, Slack `xox?-`, Stripe `sk_live_`, Google `AIza`,
 * OpenAI/Anthropic style `sk-`/`sk-ant-` keys, JWTs, PEM private keys, bearer tokens, URL
 * credentials and `password=`-style assignments.
 */
export function redactSecrets(text: string): string {
  // Most strings (ids, enum values, hex digests) contain no candidate at all: one cheap pass.
  if (text.length === 0 || (!CANDIDATE.test(text) && !CANDIDATE_ANY_CASE.test(text))) return text;
  let out = text;
  for (const pattern of SECRET_PATTERNS) {
    pattern.regex.lastIndex = 0;
    if (!pattern.regex.test(out)) continue;
    pattern.regex.lastIndex = 0;
    const marker = `[REDACTED:${pattern.kind}]`;
    if (pattern.kind === "assignment") {
      out = out.replace(pattern.regex, (match: string) => {
        const parts = ASSIGNMENT_VALUE.exec(match);
        if (parts === null) return marker;
        const value = parts[2] ?? "";
        if (value.startsWith("[REDACTED:")) return match;
        return `${parts[1] ?? ""}${marker}${parts[3] ?? ""}`;
      });
    } else if (pattern.group !== undefined) {
      const group = pattern.group;
      out = out.replace(pattern.regex, (match: string, ...groups: unknown[]) => {
        const secret = groups[group - 1];
        return typeof secret === "string" && secret.length > 0 ? match.replace(secret, marker) : marker;
      });
    } else {
      out = out.replace(pattern.regex, marker);
    }
  }
  return out;
}

/** Object keys whose values are replaced wholesale in {@link redactValue}. */
export const SENSITIVE_KEY = /^(?:password|passwd|pwd|passphrase|secret|client_?secret|token|access_?token|refresh_?token|id_?token|auth_?token|api_?key|apikey|access_?key|secret_?access_?key|private_?key|authorization|proxy_?authorization|cookie|set_?cookie|credentials?|session_?token)$/i;

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
