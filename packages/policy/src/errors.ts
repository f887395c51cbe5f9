/**
 * Load-time errors of a policy: every problem names the file, the line and column in it, and
 * the rule it belongs to, so that a broken policy can be fixed without guessing.
 */

const BRAND = Symbol.for("@ahp/policy.PolicyError");

/** One problem found in a policy file. */
export interface PolicyIssue {
  /** Short description, e.g. "unknown field `reson`". */
  message: string;
  /** Path inside the document, e.g. `["rules", 3, "action", "reason"]`. */
  path: readonly (string | number)[];
  /** 1-based line and column, when the source text is known. */
  line?: number;
  column?: number;
  /** `id` of the rule the problem is in, when it is inside a rule that has one. */
  ruleId?: string;
}

/** Formats a path the way the README writes it: `rules[3].action.reason`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out.length === 0 ? key : `.${key}`;
  }
  return out;
}

function describe(file: string | undefined, issue: PolicyIssue): string {
  const where =
    file === undefined
      ? issue.line === undefined
        ? ""
        : `${issue.line}:${issue.column ?? 1}: `
      : `${file}${issue.line === undefined ? "" : `:${issue.line}:${issue.column ?? 1}`}: `;
  const rule = issue.ruleId === undefined ? "" : `rule "${issue.ruleId}": `;
  const at = issue.path.length === 0 ? "" : ` (at ${formatPath(issue.path)})`;
  return `${where}${rule}${issue.message}${at}`;
}

/**
 * A policy that cannot be loaded: syntax error, schema violation, invalid regular expression,
 * a decision that the rule's event types do not allow, ... `file`, `line`, `column` and `ruleId`
 * describe the first problem; `issues` lists all of them.
 */
export class PolicyError extends Error {
  /** File name (or the label given for text that did not come from a file). */
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly ruleId?: string;
  /** Path of the first problem inside the document. */
  readonly path: readonly (string | number)[];
  readonly issues: readonly PolicyIssue[];
  declare readonly [BRAND]: true;

  constructor(issues: readonly PolicyIssue[], options: { file?: string; cause?: unknown } = {}) {
    const first = issues[0] ?? { message: "invalid policy", path: [] };
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
    super(`${describe(options.file, first)}${more}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PolicyError";
    if (options.file !== undefined) this.file = options.file;
    if (first.line !== undefined) this.line = first.line;
    if (first.column !== undefined) this.column = first.column;
    if (first.ruleId !== undefined) this.ruleId = first.ruleId;
    this.path = first.path;
    this.issues = issues;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Every problem, one per line, each with its position. */
  get details(): string {
    return this.issues.map((issue) => describe(this.file, issue)).join("\n");
  }

  /** True for any PolicyError, including one created by another copy of this package. */
  static isInstance(value: unknown): value is PolicyError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
