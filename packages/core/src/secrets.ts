/**
 * Secret and credential detection for prompts, tool arguments and tool results, and redaction
 * (`[REDACTED:<kind>]`). One detector for every package: policies match and redact with it, the
 * audit log and the logger redact what they write with it (see `redact.ts`).
 *
 * Every pattern is a linear-time regular expression (no nested quantifiers) except private key
 * blocks, which are found with `indexOf`. Findings never carry the secret itself, only its
 * position, so that they can be logged safely.
 */
/** Kinds reported by the secret detector (see `findSecrets`). */
export const SECRET_KINDS = [
  "aws_access_key_id",
  "aws_secret_access_key",
  "github_token",
  "gitlab_token",
  "slack_token",
  "slack_webhook",
  "stripe_key",
  "google_api_key",
  "anthropic_api_key",
  "openai_api_key",
  "jwt",
  "private_key",
  "url_credentials",
  "bearer_token",
  "generic_secret",
] as const;
/** A kind of secret the detector reports, one of {@link SECRET_KINDS}. */
export type SecretKind = (typeof SECRET_KINDS)[number];

/** One secret found by `findSecrets`: its kind and where it is in the scanned text, never the secret itself. */
export interface SecretFinding {
  kind: SecretKind;
  /** Offsets in the scanned string (UTF-16 units), `end` exclusive. */
  start: number;
  end: number;
}

/**
 * Options of the secret scan functions: which kinds to look for, and the least entropy a heuristic match needs (default 3.0 bits per
 * character).
 */
export interface SecretScanOptions {
  /** Only these kinds (default: all). */
  kinds?: readonly SecretKind[];
  /**
   * Least Shannon entropy (bits per character) of a value for the heuristic kinds
   * (`generic_secret`, `bearer_token`). Default 3.0.
   */
  minEntropy?: number;
}

interface Detector {
  kind: SecretKind;
  /** Higher wins when two findings overlap. */
  priority: number;
  find(text: string, options: Required<Pick<SecretScanOptions, "minEntropy">>, out: RawFinding[]): void;
}

interface RawFinding extends SecretFinding {
  priority: number;
}

/** Shannon entropy of a string in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let entropy = 0;
  const n = [...value].length;
  for (const count of counts.values()) {
    const p = count / n;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

const PLACEHOLDER =
  /example|your[_-]?|xxxx|\*\*\*|changeme|change[_-]me|placeholder|redacted|dummy|sample|secret_here|<|>|\$\{|\{\{|process\.env|environ|getenv|^\$|^%|^\[/i;
const DOTTED_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/;

function characterClasses(value: string): number {
  return (
    (/[a-z]/.test(value) ? 1 : 0) + (/[A-Z]/.test(value) ? 1 : 0) + (/[0-9]/.test(value) ? 1 : 0) + (/[^A-Za-z0-9]/.test(value) ? 1 : 0)
  );
}

/** A value that looks like a real secret rather than a placeholder, a variable or a word. */
function looksRandom(value: string, minEntropy: number): boolean {
  if (value.length < 8) return false;
  if (PLACEHOLDER.test(value) || DOTTED_IDENTIFIER.test(value)) return false;
  if (characterClasses(value) < 2) return false;
  return shannonEntropy(value) >= minEntropy;
}

/** A detector from a global regex; `group` selects the captured part that is the secret. */
function regexDetector(
  kind: SecretKind,
  priority: number,
  regex: RegExp,
  options: {
    group?: number | readonly number[];
    accept?: (secret: string, minEntropy: number) => boolean;
    /** A cheap test the text must pass before the full pattern runs (a literal the pattern needs). */
    hint?: (text: string) => boolean;
  } = {},
): Detector {
  const hint = options.hint;
  return {
    kind,
    priority,
    find(text, { minEntropy }, out) {
      if (hint !== undefined && !hint(text)) return;
      regex.lastIndex = 0;
      for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
        if (m[0].length === 0) {
          regex.lastIndex++;
          continue;
        }
        const groups = options.group === undefined ? [0] : typeof options.group === "number" ? [options.group] : options.group;
        let secret: string | undefined;
        for (const g of groups) {
          secret = m[g];
          if (secret !== undefined) break;
        }
        if (secret === undefined || secret.length === 0) continue;
        if (options.accept !== undefined && !options.accept(secret, minEntropy)) continue;
        const start = options.group === undefined ? m.index : m.index + m[0].lastIndexOf(secret);
        out.push({ kind, priority, start, end: start + secret.length });
      }
    },
  };
}

const hasDigitAndLetter = (s: string) => /[0-9]/.test(s) && /[A-Za-z]/.test(s);

const privateKeyDetector: Detector = {
  kind: "private_key",
  priority: 100,
  find(text, _options, out) {
    if (!text.includes("PRIVATE KEY")) return;
    const header = /-----BEGIN ((?:[A-Z0-9]+ ){0,4})PRIVATE KEY( BLOCK)?-----/g;
    let from = 0;
    for (;;) {
      header.lastIndex = from;
      const m = header.exec(text);
      if (m === null) return;
      const footer = `-----END ${m[1] ?? ""}PRIVATE KEY${m[2] ?? ""}-----`;
      const at = text.indexOf(footer, m.index + m[0].length);
      // A block without its footer (truncated output) is redacted to the end of the text.
      const end = at < 0 ? text.length : at + footer.length;
      out.push({ kind: "private_key", priority: 100, start: m.index, end });
      from = end;
    }
  },
};

const GENERIC_KEYS =
  "password|passwd|pwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|token|client[_-]?secret|private[_-]?key|credentials?";

const GENERIC_HINT = /pass|pwd|secret|key|token|credential/i;

const DETECTORS: readonly Detector[] = [
  privateKeyDetector,
  regexDetector("aws_access_key_id", 80, /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b/g, {
    hint: (t) => /A[KSBCGINRP][A-Z]A/.test(t),
  }),
  regexDetector(
    "aws_secret_access_key",
    60,
    /\baws_?secret_?(?:access_?)?key["']?\s*(?:[:=]|:=|=>)\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    { group: 1, hint: (t) => /aws/i.test(t) },
  ),
  regexDetector("github_token", 80, /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g, {
    hint: (t) => t.includes("_"),
  }),
  regexDetector("gitlab_token", 80, /\b(?:glpat|gldt|glrt|glptt|glcbt|glft|glimt|gloas)-[A-Za-z0-9_-]{20,}/g, {
    hint: (t) => t.includes("gl"),
  }),
  regexDetector("slack_webhook", 80, /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/-]{16,}/g, {
    hint: (t) => t.includes("hooks.slack.com"),
  }),
  regexDetector("slack_token", 80, /\bxox[abposer]-[A-Za-z0-9-]{10,}/g, { accept: hasDigitAndLetter, hint: (t) => t.includes("xox") }),
  regexDetector("stripe_key", 80, /\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b/g, { hint: (t) => t.includes("_live_") }),
  regexDetector("google_api_key", 80, /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g, { hint: (t) => t.includes("AIza") }),
  regexDetector("anthropic_api_key", 85, /\bsk-ant-[A-Za-z0-9_-]{20,}/g, { accept: hasDigitAndLetter, hint: (t) => t.includes("sk-ant-") }),
  regexDetector("openai_api_key", 80, /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, {
    accept: (s) => hasDigitAndLetter(s) && /[A-Z]/.test(s) && /[a-z]/.test(s),
    hint: (t) => t.includes("sk-"),
  }),
  regexDetector("jwt", 70, /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, { hint: (t) => t.includes("eyJ") }),
  regexDetector("url_credentials", 50, /\b[a-z][a-z0-9+.-]{0,20}:\/\/[^\s:/?#@"'<>]{1,256}:([^\s/?#@"'<>]{3,256})@/gi, {
    group: 1,
    accept: (s) => !PLACEHOLDER.test(s) && !/^(?:pass(?:word)?|secret|pwd|x+)$/i.test(s),
    hint: (t) => t.includes("://") && t.includes("@"),
  }),
  regexDetector("bearer_token", 40, /\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)/gi, {
    group: 1,
    accept: (s, minEntropy) => looksRandom(s, minEntropy),
    hint: (t) => /bearer/i.test(t),
  }),
  regexDetector(
    "generic_secret",
    10,
    new RegExp(
      `(?<![A-Za-z0-9_.-])["']?[A-Za-z0-9_.-]*?(?:${GENERIC_KEYS})["']?\\s*(?:=>|:=|[:=])\\s*(?:"([^"\\r\\n]{8,256})"|'([^'\\r\\n]{8,256})'|([^\\s"'\`,;&|<>(){}\\[\\]]{8,256}))`,
      "gi",
    ),
    { group: [1, 2, 3], accept: (s, minEntropy) => looksRandom(s, minEntropy), hint: (t) => /[:=]/.test(t) && GENERIC_HINT.test(t) },
  ),
];

const ALL_KINDS = new Set<SecretKind>(SECRET_KINDS);

/**
 * Finds secrets in a string. Findings are sorted by position and never overlap (where two
 * patterns overlap, the more specific kind wins: a JWT inside `token=…` is reported as `jwt`).
 */
export function findSecrets(text: string, options: SecretScanOptions = {}): SecretFinding[] {
  if (text.length < 8) return [];
  const kinds = options.kinds === undefined ? ALL_KINDS : new Set(options.kinds);
  const settings = { minEntropy: options.minEntropy ?? 3.0 };
  const raw: RawFinding[] = [];
  for (const detector of DETECTORS) if (kinds.has(detector.kind)) detector.find(text, settings, raw);
  if (raw.length === 0) return [];
  raw.sort((a, b) => b.priority - a.priority || a.start - b.start || b.end - a.end);
  const accepted: SecretFinding[] = [];
  for (const f of raw) {
    if (accepted.some((a) => f.start < a.end && a.start < f.end)) continue;
    accepted.push({ kind: f.kind, start: f.start, end: f.end });
  }
  return accepted.sort((a, b) => a.start - b.start);
}

/** True when the string contains at least one secret. */
export function containsSecret(text: string, options: SecretScanOptions = {}): boolean {
  return findSecrets(text, options).length > 0;
}

/** The string with every secret replaced by `[REDACTED:<kind>]`. */
export function redactText(text: string, options: SecretScanOptions = {}): string {
  const findings = findSecrets(text, options);
  if (findings.length === 0) return text;
  let out = "";
  let at = 0;
  for (const f of findings) {
    out += `${text.slice(at, f.start)}[REDACTED:${f.kind}]`;
    at = f.end;
  }
  return out + text.slice(at);
}

/**
 * A redacted copy of a JSON value: every string (at any depth) has its secrets replaced by
 * `[REDACTED:<kind>]`. Member names are kept. The input is never modified.
 */
export function redactSecretsIn<T>(value: T, options: SecretScanOptions = {}): T {
  return redactJson(value, options) as T;
}

function redactJson(value: unknown, options: SecretScanOptions): unknown {
  if (typeof value === "string") return redactText(value, options);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redactJson(item, options));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: redactJson(item, options), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Where secrets are inside a JSON value: the path of each string and what was found in it. */
export interface SecretLocation extends SecretFinding {
  path: (string | number)[];
}

/** Finds secrets in every string of a JSON value. */
export function scanSecrets(value: unknown, options: SecretScanOptions = {}): SecretLocation[] {
  const out: SecretLocation[] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (typeof v === "string") {
      for (const f of findSecrets(v, options)) out.push({ ...f, path: [...path] });
    } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, i]));
    else if (v !== null && typeof v === "object") for (const [k, item] of Object.entries(v)) walk(item, [...path, k]);
  };
  walk(value, []);
  return out;
}

/** True when any string inside the JSON value contains a secret (stops at the first one). */
export function valueContainsSecret(value: unknown, options: SecretScanOptions = {}): boolean {
  if (typeof value === "string") return findSecrets(value, options).length > 0;
  if (Array.isArray(value)) return value.some((item) => valueContainsSecret(item, options));
  if (value !== null && typeof value === "object") return Object.values(value).some((item) => valueContainsSecret(item, options));
  return false;
}
