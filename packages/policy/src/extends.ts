/**
 * `extends: default`: a policy file that builds on the built-in default policy. The built-in
 * rules come first, in their order, then the file's own; a file rule with the id of a built-in
 * rule replaces it in place; `enabled: false` on such a rule turns the built-in one off (a
 * rule that only turns one off may leave out everything but `id` and `enabled`); `settings`
 * merge member by member (the file's win); the file's `default` wins (else the built-in one applies); `name` and
 * `description` are the file's.
 *
 * The merge works on the validated documents; issues found while compiling the merged policy
 * are mapped back to the file's own rule positions, so errors still name file, line and rule.
 */
import type { PolicyIssue } from "./errors.js";
import type { PolicyFile, PolicyRule } from "./schema.js";

/** Where a rule of a merged policy came from. */
export type RuleOrigin =
  /** A built-in rule of the default policy, unchanged. */
  | { kind: "builtin" }
  /** A built-in rule replaced (or turned off) by the file's rule at `index`. */
  | { kind: "replaced"; index: number }
  /** A rule of the file that the default policy does not have, at `index` of the file's rules. */
  | { kind: "added"; index: number };

/** The members a rule that only turns a built-in rule off may have. */
const DISABLE_ONLY = new Set(["id", "enabled", "description"]);

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** True when the raw document asks to extend the default policy. */
export function extendsDefault(value: unknown): boolean {
  return isRecord(value) && value.extends === "default";
}

/**
 * Completes the rules of a raw document that only turn a built-in rule off
 * (`{ id: x, enabled: false }`) with the built-in rule's members, so that the document
 * validates with its rule positions unchanged. Such a rule naming no built-in rule is an issue.
 */
export function completeDisableOnlyRules(
  value: Record<string, unknown>,
  builtin: readonly PolicyRule[],
): { value: Record<string, unknown>; issues: PolicyIssue[] } {
  const rules = value.rules;
  if (!Array.isArray(rules)) return { value, issues: [] };
  const byId = new Map(builtin.map((r) => [r.id, r]));
  const issues: PolicyIssue[] = [];
  let changed = false;
  const out = rules.map((rule: unknown, index) => {
    if (!isRecord(rule) || typeof rule.id !== "string" || rule.enabled !== false) return rule;
    if (!Object.keys(rule).every((k) => DISABLE_ONLY.has(k))) return rule;
    const base = byId.get(rule.id);
    if (base === undefined) {
      issues.push({
        message: `turns off rule \`${rule.id}\`, but the default policy has no rule with that id`,
        path: ["rules", index, "id"],
        ruleId: rule.id,
      });
      return rule;
    }
    changed = true;
    return { ...base, ...rule };
  });
  return { value: changed ? { ...value, rules: out } : value, issues };
}

/**
 * Merges a validated file that extends the default policy with the (validated) default policy.
 * Returns the effective policy, where each merged rule came from, and issues of the file itself
 * (a rule id used twice in the file).
 */
export function mergeWithDefault(
  file: PolicyFile,
  builtin: PolicyFile,
): { policy: PolicyFile; origins: RuleOrigin[]; issues: PolicyIssue[] } {
  const issues: PolicyIssue[] = [];
  const own = new Map<string, number>();
  file.rules.forEach((rule, index) => {
    const first = own.get(rule.id);
    if (first !== undefined) {
      issues.push({
        message: `duplicate rule id \`${rule.id}\` (first used by rules[${first}])`,
        path: ["rules", index, "id"],
        ruleId: rule.id,
      });
    } else own.set(rule.id, index);
  });
  const rules: PolicyRule[] = [];
  const origins: RuleOrigin[] = [];
  const builtinIds = new Set<string>();
  for (const rule of builtin.rules) {
    builtinIds.add(rule.id);
    const index = own.get(rule.id);
    if (index === undefined) {
      rules.push(rule);
      origins.push({ kind: "builtin" });
    } else {
      rules.push(file.rules[index]!);
      origins.push({ kind: "replaced", index });
    }
  }
  file.rules.forEach((rule, index) => {
    if (builtinIds.has(rule.id) || own.get(rule.id) !== index) return;
    rules.push(rule);
    origins.push({ kind: "added", index });
  });
  const settings = builtin.settings === undefined && file.settings === undefined ? undefined : { ...builtin.settings, ...file.settings };
  const { extends: _extends, ...rest } = file;
  const policy: PolicyFile = {
    ...rest,
    ...(settings === undefined ? {} : { settings }),
    ...(file.default === undefined && builtin.default !== undefined ? { default: builtin.default } : {}),
    rules,
  };
  return { policy, origins, issues };
}

/**
 * Maps an issue found in the merged policy back to the file: a rule path points at the file's
 * rule; an issue inside an unchanged built-in rule keeps no file position and says so.
 */
export function issueInFile(issue: PolicyIssue, origins: readonly RuleOrigin[]): PolicyIssue & { builtin?: true } {
  const [head, index, ...rest] = issue.path;
  if (head !== "rules" || typeof index !== "number") return issue;
  const origin = origins[index];
  if (origin === undefined) return issue;
  if (origin.kind === "builtin") return { ...issue, message: `in the built-in default policy: ${issue.message}`, path: [], builtin: true };
  return { ...issue, path: ["rules", origin.index, ...rest] };
}
