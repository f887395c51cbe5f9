/**
 * Loading policies: text (YAML or JSON) or objects are validated against the zod schema, then
 * compiled. Every problem becomes a {@link PolicyError} naming file, line, column and rule.
 */
import { readFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { compileValidated, type CompileOptions, type CompiledPolicyData } from "./compile.js";
import { PolicyError, type PolicyIssue } from "./errors.js";
import { zodIssues } from "./issues.js";
import { DEFAULT_POLICY } from "./default-policy.js";
import { completeDisableOnlyRules, extendsDefault, issueInFile, mergeWithDefault, type RuleOrigin } from "./extends.js";
import { PolicyFileSchema, type PolicyFile, type PolicyFileInput } from "./schema.js";
import { parseSource, type DocPath, type SourceLocator } from "./source.js";

const BRAND = Symbol.for("@ahp/policy.CompiledPolicy");

/** A validated and compiled policy. Immutable; share it between engines freely. */
export class CompiledPolicy {
  /** The validated policy document. */
  readonly policy: PolicyFile;
  /** File it was loaded from, when it was. */
  readonly file?: string;
  /** Source text, when it was loaded from text. */
  readonly text?: string;
  /** @internal compiled rules and settings. */
  readonly data: CompiledPolicyData;
  /**
   * For a file with `extends: default`: where each rule of {@link policy} (the effective, merged
   * document) came from, in the same order. Undefined for a file that extends nothing.
   */
  readonly origins?: readonly RuleOrigin[];
  declare readonly [BRAND]: true;

  /** @internal use {@link loadPolicy}, {@link compilePolicy} or {@link loadPolicyFile}. */
  constructor(data: CompiledPolicyData, source: { file?: string; text?: string; origins?: readonly RuleOrigin[] } = {}) {
    this.policy = data.policy;
    this.data = data;
    if (source.origins !== undefined) this.origins = source.origins;
    if (source.file !== undefined) this.file = source.file;
    if (source.text !== undefined) this.text = source.text;
    Object.defineProperty(this, BRAND, { value: true });
    Object.freeze(this);
  }

  get name(): string | undefined {
    return this.policy.name;
  }

  /** Ids of the enabled rules, in evaluation order. */
  get ruleIds(): string[] {
    return this.data.rules.map((r) => r.id);
  }

  static isInstance(value: unknown): value is CompiledPolicy {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** Options for parsing and compiling a policy file: its name and format, and overrides of its settings. */
export interface LoadPolicyOptions extends CompileOptions {
  /** File name used in error messages (and to pick the format by extension). */
  file?: string;
  /** `yaml` or `json`; default: by the file extension, else by the first character (`{` means JSON). */
  format?: "yaml" | "json";
}

/** Anything a policy can be made from: YAML/JSON text, a policy object, or an already compiled policy. */
export type PolicySource = string | PolicyFileInput | CompiledPolicy;

function valueAt(root: unknown, path: DocPath): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

function ruleIdAt(root: unknown, path: DocPath): string | undefined {
  if (path[0] !== "rules" || typeof path[1] !== "number") return undefined;
  const id = valueAt(root, ["rules", path[1], "id"]);
  return typeof id === "string" ? id : undefined;
}

type Located = PolicyIssue & { key?: boolean; builtin?: boolean };

function fail(issues: Located[], root: unknown, file: string | undefined, locator: SourceLocator | undefined): never {
  const located: PolicyIssue[] = issues.map(({ key, builtin, ...issue }) => {
    const out: PolicyIssue = { ...issue };
    const ruleId = issue.ruleId ?? ruleIdAt(root, issue.path);
    if (ruleId !== undefined) out.ruleId = ruleId;
    // An issue inside an unchanged built-in rule has no position in this file.
    const pos = builtin === true ? undefined : locator?.locate(issue.path, { key: key === true });
    if (pos !== undefined) {
      out.line = pos.line;
      out.column = pos.column;
    }
    return out;
  });
  throw new PolicyError(located, file === undefined ? {} : { file });
}

function validate(value: unknown, file: string | undefined, locator: SourceLocator | undefined): PolicyFile {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail([{ message: "a policy must be a mapping with `version: 1` and `rules`", path: [] }], value, file, locator);
  }
  let input = value as Record<string, unknown>;
  if (extendsDefault(input)) {
    const completed = completeDisableOnlyRules(input, builtinPolicy().rules);
    if (completed.issues.length > 0) fail(completed.issues, value, file, locator);
    input = completed.value;
  }
  const parsed = PolicyFileSchema.safeParse(input);
  if (!parsed.success) fail(zodIssues(parsed.error.issues, value), value, file, locator);
  return parsed.data;
}

let builtin: PolicyFile | undefined;
/** The built-in default policy, validated once. */
function builtinPolicy(): PolicyFile {
  builtin ??= PolicyFileSchema.parse(DEFAULT_POLICY);
  return builtin;
}

function compile(
  file: PolicyFile,
  root: unknown,
  options: LoadPolicyOptions,
  locator: SourceLocator | undefined,
  text?: string,
): CompiledPolicy {
  let policy = file;
  let origins: readonly RuleOrigin[] | undefined;
  if (file.extends === "default") {
    const merged = mergeWithDefault(file, builtinPolicy());
    if (merged.issues.length > 0) fail(merged.issues, root, options.file, locator);
    policy = merged.policy;
    origins = merged.origins;
  }
  const result = compileValidated(policy, options);
  if (!result.ok) {
    const issues = origins === undefined ? result.issues : result.issues.map((issue) => issueInFile(issue, origins));
    fail(issues, root, options.file, locator);
  }
  return new CompiledPolicy(result.data, {
    ...(options.file === undefined ? {} : { file: options.file }),
    ...(text === undefined ? {} : { text }),
    ...(origins === undefined ? {} : { origins }),
  });
}

/** Parses and validates policy text (YAML or JSON) without compiling it. */
export function parsePolicy(text: string, options: LoadPolicyOptions = {}): PolicyFile {
  const { value, locator } = parseSource(text, options.file, options.format);
  return validate(value, options.file, locator);
}

/**
 * Validates and compiles a policy from text (YAML or JSON), a policy object, or returns an
 * already compiled one unchanged. Throws {@link PolicyError}.
 */
export function loadPolicy(source: PolicySource, options: LoadPolicyOptions = {}): CompiledPolicy {
  if (CompiledPolicy.isInstance(source)) return source;
  if (typeof source === "string") {
    const { value, locator } = parseSource(source, options.file, options.format);
    return compile(validate(value, options.file, locator), value, options, locator, source);
  }
  return compile(validate(source, options.file, undefined), source, options, undefined);
}

/** Alias of {@link loadPolicy} for policy objects written in code. */
export const compilePolicy: (source: PolicySource, options?: LoadPolicyOptions) => CompiledPolicy = loadPolicy;

/** Reads, validates and compiles a policy file (`.json` is JSON, anything else YAML). */
export async function loadPolicyFile(file: string, options: Omit<LoadPolicyOptions, "file"> = {}): Promise<CompiledPolicy> {
  const text = await readFile(file, "utf8");
  return loadPolicy(text, { ...options, file });
}

/** Synchronous {@link loadPolicyFile}, for start-up code. */
export function loadPolicyFileSync(file: string, options: Omit<LoadPolicyOptions, "file"> = {}): CompiledPolicy {
  return loadPolicy(readFileSync(file, "utf8"), { ...options, file });
}
