/**
 * Compiles a validated policy file into closures: one predicate per rule (cheap conditions
 * first), regexes and globs compiled once, decisions precomputed and checked at load time
 * against the decision schema of every event type the rule can match.
 */
import path from "node:path";
import { DecisionSchema, EVENT_TABLE, type AhpEvent, type EventType } from "@ahp/core";
import type { z } from "zod";
import type { PolicyIssue } from "./errors.js";
import { zodIssues } from "./issues.js";
import { compileGlobs, hasGlobSyntax } from "./glob.js";
import { applyMergePatch, jsonEqual } from "./json.js";
import { compilePath, type CompiledPath } from "./paths.js";
import { compileRegex } from "./regex.js";
import type {
  FieldConditionInput,
  NumberCondition,
  PathMatch,
  PolicyAction,
  PolicyFile,
  PolicyMatchInput,
  PolicyRule,
  RateLimit,
  SecretsMatch,
  SessionMatch,
  ShellMatch,
  ToolCallMatch,
} from "./schema.js";
import { redactSecretsIn, valueContainsSecret } from "@ahp/core";
import { pipesInto } from "@ahp/shell";
import { normalizeShellPath, parseShell, toolCalls, type OpaqueReason, type SimpleCommand, type ToolCall } from "./shell.js";
import type { SessionState } from "./state.js";

type DocPath = (string | number)[];

/** Defaults of the content matchers (documented in the README). */
export const DEFAULT_SHELL_FIELDS = Object.freeze([
  "payload.arguments.command",
  "payload.arguments.cmd",
  "payload.arguments.script",
  "payload.command",
  "payload.input.command",
]);
export const DEFAULT_PATH_FIELDS = Object.freeze([
  "payload.arguments.path",
  "payload.arguments.file_path",
  "payload.arguments.filePath",
  "payload.arguments.filename",
  "payload.arguments.target_file",
  "payload.arguments.destination",
  "payload.arguments.paths.*",
  "payload.arguments.edits.*.file_path",
  "payload.path",
  "payload.file_path",
]);
export const DEFAULT_ROOT_FIELDS = Object.freeze([
  "payload.working_directory",
  "payload.cwd",
  "payload.workspace",
  "context.capabilities.workspace",
  "metadata.workspace",
]);
/** Where the tool name is read, in this order. */
export const TOOL_NAME_FIELDS = Object.freeze(["payload.tool_name", "payload.tool", "payload.name"]);

export const DEFAULT_MAX_MATCH_LENGTH = 65_536;

/** The live counters a `session` condition reads (see {@link SessionMatch}). */
export interface SessionCounters {
  actions: number;
  tokens: number;
  errors: number;
  duration_ms: number;
  events: number;
  prompts: number;
  background_runs: number;
  background_ms: number;
}

/** Longest command line the shell matchers analyse, whatever `max_match_length` says. */
export const MAX_SHELL_ANALYSIS_LENGTH = 65_536;

/** Parses a command line within the limits; `undefined` when it is too long or too deeply nested to analyse. */
function analyse(text: string, maxLen: number, cwd: string | undefined): SimpleCommand[] | undefined {
  if (text.length > Math.min(maxLen, MAX_SHELL_ANALYSIS_LENGTH)) return undefined;
  try {
    return parseShell(text, cwd === undefined ? {} : { cwd });
  } catch (err) {
    // Nesting deep enough to exhaust the stack (`"$("$("…`): not analysable, never a crash.
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

/** Per-evaluation facts, computed lazily and cached for the rules that need them. */
export class EvalContext {
  #shell: Map<string, SimpleCommand[] | undefined> | undefined;
  #tool: string | null | undefined;
  #counters: SessionCounters | undefined;
  constructor(
    readonly event: AhpEvent,
    readonly now: number,
    readonly settings: CompiledSettings,
    readonly session: () => SessionState,
  ) {}

  #strings: (string[] | undefined)[] | undefined;

  /** The strings at a field list, read once per evaluation however many rules use the list. */
  strings(list: FieldList): string[] {
    // Packed (no holes): one slot per field list known when the evaluation started.
    this.#strings ??= new Array<string[] | undefined>(FIELD_LIST_IDS.size).fill(undefined);
    let value = this.#strings[list.id];
    if (value === undefined) {
      value = collectStrings(list.paths, this.event);
      this.#strings[list.id] = value;
    }
    return value;
  }

  /** The tool name in lower case (tool globs are case-insensitive). */
  get toolNameLower(): string | undefined {
    if (this.#toolLower === undefined) this.#toolLower = this.toolName?.toLowerCase() ?? null;
    return this.#toolLower ?? undefined;
  }
  #toolLower: string | null | undefined;

  /**
   * The tool name: `payload.tool_name`, `payload.tool`, `payload.name`, else the name found by
   * tool-call normalization (OpenAI `function.name`, MCP `params.name`, ACP `kind` …).
   */
  get toolName(): string | undefined {
    if (this.#tool === undefined) {
      const payload = this.event.payload as Record<string, unknown> | null;
      this.#tool = null;
      if (payload !== null && typeof payload === "object") {
        for (const key of ["tool_name", "tool", "name"]) {
          const v = Object.prototype.hasOwnProperty.call(payload, key) ? payload[key] : undefined;
          if (typeof v === "string") {
            this.#tool = v;
            break;
          }
        }
      }
      if (this.#tool === null) this.#tool = this.calls.find((c) => c.name !== undefined)?.name ?? null;
    }
    return this.#tool ?? undefined;
  }

  /** The payload's tool calls in one view, whatever shape the agent framework sent (see `toolCalls` of `@ahp/shell`). */
  get calls(): readonly ToolCall[] {
    this.#calls ??= toolCalls(this.event.payload);
    return this.#calls;
  }
  #calls: readonly ToolCall[] | undefined;

  /** Shell command texts of the payload: the strings at the default shell fields plus the commands tool-call normalization finds. */
  get shellTexts(): readonly string[] {
    if (this.#shellTexts === undefined) {
      // Distinct texts, fields first. Usually the normalized calls find the same text as the
      // fields (or none), and the fields' array (shared, never changed) is the answer.
      const fields = this.strings(DEFAULT_SHELL_FIELD_LIST);
      let texts = fields.length < 2 ? fields : [...new Set(fields)];
      for (const call of this.calls) {
        for (const c of call.commands) {
          if (texts.includes(c)) continue;
          if (texts === fields) texts = [...fields];
          texts.push(c);
        }
      }
      this.#shellTexts = texts;
    }
    return this.#shellTexts;
  }
  #shellTexts: readonly string[] | undefined;

  /**
   * The simple commands of a command line, or `undefined` when it is not analysed: longer than
   * `settings.maxMatchLength`, or too deeply nested for the parser. Rules see such a line through
   * the `too-long` opaque reason.
   */
  shell(text: string): SimpleCommand[] | undefined {
    this.#shell ??= new Map();
    let commands = this.#shell.get(text);
    if (commands === undefined && !this.#shell.has(text)) {
      commands = analyse(text, this.settings.maxMatchLength, this.calls[0]?.cwd);
      this.#shell.set(text, commands);
    }
    return commands;
  }

  get counters(): SessionCounters {
    if (this.#counters === undefined) {
      const s = this.session();
      const stats = this.event.context?.session_stats ?? undefined;
      const reported = s.reported;
      this.#counters = {
        actions: stats?.total_actions ?? Math.max(s.actions, reported?.total_actions ?? 0),
        tokens: stats?.total_tokens ?? Math.max(s.tokens, s.heartbeatTokens, reported?.total_tokens ?? 0),
        errors: stats?.error_count ?? Math.max(s.errors, reported?.error_count ?? 0),
        duration_ms: stats?.duration_ms ?? Math.max(0, this.now - s.firstSeen),
        events: s.events,
        prompts: s.prompts,
        background_runs: s.backgroundRuns,
        background_ms: s.backgroundMs + (s.backgroundSince === undefined ? 0 : Math.max(0, this.now - s.backgroundSince)),
      };
    }
    return this.#counters;
  }
}

export interface CompiledSettings {
  workspaceRoot: string | undefined;
  maxMatchLength: number;
}

type Predicate = (ctx: EvalContext) => boolean;
type ValueTest = (value: unknown) => boolean;

export interface CompiledRateLimit {
  scope: "session" | "agent" | "global";
  rate: number;
  intervalMs: number;
  burst: number;
  /** Bucket key: rule id and configuration (a changed configuration starts a fresh bucket). */
  key: string;
}

export interface CompiledRule {
  readonly id: string;
  readonly index: number;
  readonly events: ReadonlySet<EventType>;
  readonly test: Predicate;
  readonly rateLimit?: CompiledRateLimit;
  /** Builds the decision for an event of the given type; `retryAfterMs` is set for rate-limited rules. */
  decide(type: EventType, ctx: EvalContext, retryAfterMs?: number): unknown;
}

/** A policy ready to evaluate. Immutable; engines swap whole instances on reload. */
export interface CompiledPolicyData {
  readonly policy: PolicyFile;
  readonly rules: readonly CompiledRule[];
  readonly byType: ReadonlyMap<EventType, readonly CompiledRule[]>;
  readonly defaultDecision: unknown;
  readonly settings: CompiledSettings & {
    maxSessions?: number;
    maxAgents?: number;
    stateTtlMs?: number;
  };
}

// ---------------------------------------------------------------- conditions

class Issues {
  readonly list: PolicyIssue[] = [];
  constructor(readonly ruleId: (path: DocPath) => string | undefined) {}
  add(path: DocPath, message: string, key = false): void {
    const ruleId = this.ruleId(path);
    const issue: PolicyIssue & { key?: boolean } = { message, path: [...path] };
    if (ruleId !== undefined) issue.ruleId = ruleId;
    if (key) issue.key = true;
    this.list.push(issue);
  }
  /** Runs `fn`, turning a thrown Error into an issue at `path`. */
  guard<T>(path: DocPath, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      this.add(path, (error as Error).message);
      return undefined;
    }
  }
}

const asList = (v: string | string[]): string[] => (typeof v === "string" ? [v] : v);

/**
 * Case-insensitive name globs (programs, tools): a Set lookup when no entry uses glob syntax,
 * else one compiled regex.
 */
function nameMatcher(globs: readonly string[]): (lowerCaseName: string) => boolean {
  const literal = new Set(globs.filter((g) => !hasGlobSyntax(g)).map((g) => g.toLowerCase()));
  const patterns = globs.filter(hasGlobSyntax);
  if (patterns.length === 0) return (name) => literal.has(name);
  const re = compileGlobs(patterns, { ignoreCase: true });
  return (name) => literal.has(name) || re.test(name);
}
const ALWAYS: ValueTest = () => true;
const NEVER: ValueTest = () => false;

function and(tests: ValueTest[]): ValueTest {
  if (tests.length === 0) return ALWAYS;
  if (tests.length === 1) return tests[0]!;
  return (v) => {
    for (const t of tests) if (!t(v)) return false;
    return true;
  };
}

function andP(preds: Predicate[]): Predicate {
  if (preds.length === 0) return () => true;
  if (preds.length === 1) return preds[0]!;
  return (ctx) => {
    for (const p of preds) if (!p(ctx)) return false;
    return true;
  };
}

function numberTest(c: NumberCondition | FieldConditionInput): ((n: number) => boolean)[] {
  const out: ((n: number) => boolean)[] = [];
  const { lt, lte, gt, gte } = c;
  if (lt !== undefined) out.push((n) => n < lt);
  if (lte !== undefined) out.push((n) => n <= lte);
  if (gt !== undefined) out.push((n) => n > gt);
  if (gte !== undefined) out.push((n) => n >= gte);
  return out;
}

function compileNumberCondition(c: NumberCondition, at: DocPath, issues: Issues): (n: number | undefined) => boolean {
  const tests = numberTest(c);
  if (c.equals !== undefined) {
    const eq = c.equals;
    tests.push((n) => n === eq);
  }
  if (c.one_of !== undefined) {
    const set = new Set(c.one_of);
    tests.push((n) => set.has(n));
  }
  if (tests.length === 0) issues.add(at, "empty numeric condition: give at least one of equals, one_of, lt, lte, gt, gte");
  return (n) => {
    if (typeof n !== "number") return false;
    for (const t of tests) if (!t(n)) return false;
    return true;
  };
}

export function compileFieldCondition(c: FieldConditionInput, at: DocPath, issues: Issues, maxLen: number): ValueTest {
  const tests: ValueTest[] = [];
  const ic = c.ignore_case === true;
  const cut = (s: string) => (s.length > maxLen ? s.slice(0, maxLen) : s);
  const norm = (v: unknown) => (ic && typeof v === "string" ? v.toLowerCase() : v);
  if (c.equals !== undefined) {
    const expected = norm(c.equals);
    tests.push((v) => jsonEqual(norm(v), expected));
  }
  if (c.one_of !== undefined) {
    const options = c.one_of.map(norm);
    const strings = options.every((o) => typeof o === "string") ? new Set(options) : undefined;
    tests.push(
      strings !== undefined
        ? (v) => typeof v === "string" && strings.has(norm(v) as string)
        : (v) => options.some((o) => jsonEqual(norm(v), o)),
    );
  }
  if (c.glob !== undefined) {
    const re = issues.guard([...at, "glob"], () => compileGlobs(asList(c.glob!), { ignoreCase: ic }));
    tests.push(re === undefined ? NEVER : (v) => typeof v === "string" && re.test(cut(v)));
  }
  if (c.regex !== undefined) {
    const list = asList(c.regex);
    const res = list.map((source, k) =>
      issues.guard([...at, "regex", ...(typeof c.regex === "string" ? [] : [k])], () => compileRegex(source, ic)),
    );
    const ok = res.filter((r): r is RegExp => r !== undefined);
    tests.push((v) => {
      if (typeof v !== "string") return false;
      const s = cut(v);
      for (const r of ok) if (r.test(s)) return true;
      return false;
    });
  }
  if (c.contains !== undefined) {
    const needles = asList(c.contains).map((n) => (ic ? n.toLowerCase() : n));
    tests.push((v) => {
      if (typeof v === "string") {
        const s = ic ? cut(v).toLowerCase() : cut(v);
        for (const n of needles) if (s.includes(n)) return true;
        return false;
      }
      if (Array.isArray(v)) return v.some((item) => typeof item === "string" && needles.includes(ic ? item.toLowerCase() : item));
      return false;
    });
  }
  const numeric = numberTest(c);
  if (numeric.length > 0) tests.push((v) => typeof v === "number" && numeric.every((t) => t(v)));
  if (c.exists !== undefined) {
    const want = c.exists;
    tests.push((v) => (v !== undefined && v !== null) === want);
  }
  if (c.not !== undefined) {
    const inner = compileFieldCondition(c.not, [...at, "not"], issues, maxLen);
    tests.push((v) => !inner(v));
  }
  if (tests.length === 0)
    issues.add(at, "empty condition: give at least one operator (equals, one_of, glob, regex, contains, lt, lte, gt, gte, exists, not)");
  return and(tests);
}

function compilePathOrIssue(text: string, at: DocPath, issues: Issues, key = false): CompiledPath | undefined {
  try {
    return compilePath(text);
  } catch (error) {
    issues.add(at, (error as Error).message, key);
    return undefined;
  }
}

/** Test over every value a path yields: true when any value passes (or, when none exists, when `undefined` passes). */
function overPath(p: CompiledPath, test: ValueTest): Predicate {
  if (!p.multi) return (ctx) => test(p.get(ctx.event));
  return (ctx) => {
    const values: unknown[] = [];
    p.collect(ctx.event, values);
    if (values.length === 0) return test(undefined);
    return values.some(test);
  };
}

/** Every string found at the paths (arrays of strings included). */
function collectStrings(paths: readonly CompiledPath[], event: AhpEvent): string[] {
  const out: string[] = [];
  let values: unknown[] | undefined;
  const add = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const item of v) if (typeof item === "string") out.push(item);
  };
  for (const p of paths) {
    if (!p.multi) {
      add(p.get(event));
      continue;
    }
    values ??= [];
    values.length = 0;
    p.collect(event, values);
    for (const v of values) add(v);
  }
  return out;
}

/** A field list compiled once, whose strings are read once per evaluation however many rules use it. */
interface FieldList {
  /** Small integer per distinct list of paths: the slot of its strings in an evaluation. */
  id: number;
  paths: CompiledPath[];
}

/** Ids of distinct field lists (bounded by the distinct lists in the policies compiled). */
const FIELD_LIST_IDS = new Map<string, number>();

const stringsAt = (list: FieldList, ctx: EvalContext): string[] => ctx.strings(list);

function compilePaths(list: readonly string[], at: DocPath, issues: Issues): CompiledPath[] {
  return list.map((text, k) => compilePathOrIssue(text, [...at, k], issues)).filter((p): p is CompiledPath => p !== undefined);
}

function compileFieldList(list: readonly string[], at: DocPath, issues: Issues): FieldList {
  const key = list.join("\u0000");
  let id = FIELD_LIST_IDS.get(key);
  if (id === undefined) {
    id = FIELD_LIST_IDS.size;
    FIELD_LIST_IDS.set(key, id);
  }
  return { id, paths: compilePaths(list, at, issues) };
}

/** The default shell fields, read by every shell matcher that gives no `fields`. */
const DEFAULT_SHELL_FIELD_LIST: FieldList = {
  id: (() => {
    const key = DEFAULT_SHELL_FIELDS.join("\u0000");
    if (!FIELD_LIST_IDS.has(key)) FIELD_LIST_IDS.set(key, FIELD_LIST_IDS.size);
    return FIELD_LIST_IDS.get(key)!;
  })(),
  paths: DEFAULT_SHELL_FIELDS.map((text) => compilePath(text)),
};

// ---------------------------------------------------------------- shell

/** Opaque reasons a shell condition may name: the parser's, and `too-long` for a line that was not analysed. */
export type ShellOpaqueReason = OpaqueReason | "too-long";

const OUTPUT_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", "<>"]);

function compileShell(m: ShellMatch, at: DocPath, issues: Issues, maxLen: number): Predicate {
  const fields = m.fields === undefined ? undefined : compileFieldList(m.fields, [...at, "fields"], issues);
  const line = m.line === undefined ? undefined : compileFieldCondition(m.line, [...at, "line"], issues, maxLen);
  const per: ((cmd: SimpleCommand) => boolean)[] = [];
  if (m.program !== undefined) {
    const re = issues.guard([...at, "program"], () => nameMatcher(asList(m.program!)));
    per.push(re === undefined ? () => false : (cmd) => re(cmd.program));
  }
  if (m.flags_any !== undefined) {
    const flags = m.flags_any;
    per.push((cmd) => {
      for (const f of flags) if (cmd.flags.has(f)) return true;
      return false;
    });
  }
  if (m.flags_all !== undefined) {
    const groups = m.flags_all.map((g) => asList(g));
    per.push((cmd) => groups.every((g) => g.some((f) => cmd.flags.has(f))));
  }
  if (m.option !== undefined) {
    const names = asList(m.option.name);
    const value =
      m.option.value === undefined ? undefined : compileFieldCondition(m.option.value, [...at, "option", "value"], issues, maxLen);
    per.push((cmd) =>
      names.some((name) => {
        const values = cmd.options.get(name);
        if (values === undefined) return false;
        if (value === undefined) return true;
        return values.length === 0 ? value(undefined) : values.some(value);
      }),
    );
  }
  if (m.args !== undefined) {
    const tests = m.args.map((c, k) => compileFieldCondition(c, [...at, "args", k], issues, maxLen));
    per.push((cmd) => {
      for (const t of tests) if (!cmd.args.some(t)) return false;
      return true;
    });
  }
  if (m.argv !== undefined) {
    const t = compileFieldCondition(m.argv, [...at, "argv"], issues, maxLen);
    per.push((cmd) => t(cmd.argv.join(" ")));
  }
  if (m.redirect !== undefined) {
    const t = compileFieldCondition(m.redirect, [...at, "redirect"], issues, maxLen);
    per.push((cmd) => cmd.redirects.some((r) => OUTPUT_REDIRECTS.has(r.op) && t(normalizeShellPath(r.target))));
  }
  if (m.piped_to !== undefined) {
    const re = issues.guard([...at, "piped_to"], () => nameMatcher(asList(m.piped_to!)));
    per.push(re === undefined ? () => false : (cmd) => pipesInto(cmd, re));
  }
  if (m.paths !== undefined) {
    const tests = m.paths.map((c, k) => compileFieldCondition(c, [...at, "paths", k], issues, maxLen));
    per.push((cmd) => {
      for (const t of tests) if (!cmd.paths.some(t)) return false;
      return true;
    });
  }
  if (m.writes !== undefined) {
    const t = compileFieldCondition(m.writes, [...at, "writes"], issues, maxLen);
    per.push((cmd) => cmd.writes.some(t));
  }
  const reasons: ReadonlySet<ShellOpaqueReason> | undefined =
    m.opaque === undefined || m.opaque === false
      ? undefined
      : new Set(m.opaque === true ? (["dynamic-command", "dynamic-script", "inline-code", "too-long"] as const) : m.opaque);
  if (m.opaque === false) per.push((cmd) => cmd.opaque.length === 0);
  else if (reasons !== undefined) per.push((cmd) => cmd.opaque.some((r) => reasons.has(r)));
  if (m.word !== undefined) {
    const t = compileFieldCondition(m.word, [...at, "word"], issues, maxLen);
    per.push((cmd) => {
      for (const w of cmd.words) if (t(w)) return true;
      return false;
    });
  }
  if (line === undefined && per.length === 0)
    issues.add(
      at,
      "empty shell condition: give line, program, flags_any, flags_all, option, args, paths, argv, redirect, writes, piped_to, opaque or word",
    );
  const command =
    per.length === 0
      ? undefined
      : (cmd: SimpleCommand) => {
          for (const t of per) if (!t(cmd)) return false;
          return true;
        };
  // A line that was not analysed matches only a condition that asks for `too-long` (alone or with `line`).
  const tooLong = reasons?.has("too-long") === true && per.length === 1;
  return (ctx) => {
    for (const text of fields === undefined ? ctx.shellTexts : stringsAt(fields, ctx)) {
      if (line !== undefined && !line(text)) continue;
      if (command === undefined) return true;
      const commands = ctx.shell(text);
      if (commands === undefined) {
        if (tooLong) return true;
        continue;
      }
      for (const cmd of commands) if (command(cmd)) return true;
    }
    return false;
  };
}

// ---------------------------------------------------------------- paths

interface Resolved {
  path: string;
  /** undefined when no workspace root is known. */
  inside: boolean | undefined;
}

const WINDOWS_ABS = /^(?:[A-Za-z]:[\\/]|\\\\)/;

/** Lexical resolution of a file path against the workspace root (symbolic links are not followed). */
export function resolveWorkspacePath(file: string, root: string | undefined): Resolved {
  let p = file.startsWith("file://") ? decodeURIComponentSafe(file.slice(7)) : file;
  if (p.startsWith("$HOME/") || p === "$HOME") p = `~${p.slice(5)}`;
  const windows = WINDOWS_ABS.test(p) || (root !== undefined && WINDOWS_ABS.test(root));
  const lib = windows ? path.win32 : path.posix;
  if (p === "~" || p.startsWith("~/") || p.startsWith("~\\")) {
    const resolved = normalizeShellPath(p.replace(/\\/g, "/"));
    const r = root === undefined ? undefined : normalizeShellPath(root.replace(/\\/g, "/"));
    const inside = r !== undefined && r.startsWith("~") ? resolved === r || resolved.startsWith(`${r}/`) : false;
    return { path: resolved, inside };
  }
  if (root === undefined || root.startsWith("~")) {
    if (lib.isAbsolute(p)) return { path: lib.normalize(p), inside: root === undefined ? undefined : false };
    const rel = lib.normalize(p);
    const escapes = rel === ".." || rel.startsWith(`..${lib.sep}`) || rel.startsWith("../");
    return { path: rel, inside: escapes ? false : undefined };
  }
  // Never resolve against the process's working directory: a relative root is taken from the filesystem root.
  const base = rootBase(root, windows);
  let resolved = windows ? lib.resolve(base, p) : p.startsWith("/") ? lib.normalize(p) : lib.normalize(`${base}/${p}`);
  if (!windows && resolved.length > 1 && resolved.endsWith("/")) resolved = resolved.slice(0, -1);
  const cmp = (s: string) => (windows ? s.toLowerCase() : s);
  const b = cmp(base.endsWith(lib.sep) ? base : base + lib.sep);
  const inside = cmp(resolved) === cmp(base) || cmp(resolved).startsWith(b);
  return { path: resolved, inside };
}

let lastRoot: { root: string; windows: boolean; base: string } | undefined;

/** The absolute, normalized root (the last one is remembered: consecutive events share a workspace). */
function rootBase(root: string, windows: boolean): string {
  if (lastRoot !== undefined && lastRoot.root === root && lastRoot.windows === windows) return lastRoot.base;
  const lib = windows ? path.win32 : path.posix;
  const base = lib.isAbsolute(root) ? lib.resolve(root) : lib.resolve(windows ? "C:\\" : "/", root);
  lastRoot = { root, windows, base };
  return base;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function compilePathMatch(m: PathMatch, at: DocPath, issues: Issues, maxLen: number): Predicate {
  const fields = compileFieldList(m.fields ?? DEFAULT_PATH_FIELDS, [...at, "fields"], issues);
  const roots = compilePaths(m.root_fields ?? DEFAULT_ROOT_FIELDS, [...at, "root_fields"], issues);
  const resolvedTest = m.resolved === undefined ? undefined : compileFieldCondition(m.resolved, [...at, "resolved"], issues, maxLen);
  const outside = m.outside_workspace;
  if (outside === undefined && resolvedTest === undefined) issues.add(at, "empty path condition: give outside_workspace or resolved");
  return (ctx) => {
    const files = stringsAt(fields, ctx);
    if (files.length === 0) return false;
    let root = ctx.settings.workspaceRoot;
    if (root === undefined) {
      for (const p of roots) {
        const v = p.get(ctx.event);
        if (typeof v === "string" && v.length > 0) {
          root = v;
          break;
        }
      }
    }
    const resolved = files.map((f) => resolveWorkspacePath(f, root));
    if (outside === true && !resolved.some((r) => r.inside === false)) return false;
    if (outside === false && !resolved.every((r) => r.inside === true)) return false;
    if (resolvedTest !== undefined && !resolved.some((r) => resolvedTest(r.path))) return false;
    return true;
  };
}

// ---------------------------------------------------------------- secrets, session

function compileSecrets(m: SecretsMatch, at: DocPath, issues: Issues): Predicate {
  const fields = compilePaths(m.fields ?? ["payload"], [...at, "fields"], issues);
  const options = m.kinds === undefined ? {} : { kinds: m.kinds };
  return (ctx) => {
    const values: unknown[] = [];
    for (const p of fields) p.collect(ctx.event, values);
    return values.some((v) => valueContainsSecret(v, options));
  };
}

function compileSession(m: SessionMatch, at: DocPath, issues: Issues): Predicate {
  const tests: Predicate[] = [];
  for (const [key, cond] of Object.entries(m) as [keyof SessionCounters, NumberCondition | undefined][]) {
    if (cond === undefined) continue;
    const t = compileNumberCondition(cond, [...at, key], issues);
    tests.push((ctx) => t(ctx.counters[key]));
  }
  if (tests.length === 0) issues.add(at, "empty session condition");
  return andP(tests);
}

// ---------------------------------------------------------------- tool calls

/** `tool_call`: facts of the normalized tool calls; each member given must hold. */
function compileToolCall(m: ToolCallMatch): Predicate {
  const tests: Predicate[] = [];
  if (m.named !== undefined) {
    const want = m.named;
    tests.push((ctx) => (ctx.toolName !== undefined) === want);
  }
  if (m.shell !== undefined) {
    const want = m.shell;
    tests.push((ctx) => ctx.calls.some((c) => c.shell) === want);
  }
  if (m.command !== undefined) {
    const want = m.command;
    tests.push((ctx) => ctx.shellTexts.length > 0 === want);
  }
  return andP(tests);
}

// ---------------------------------------------------------------- match

export function compileMatch(m: PolicyMatchInput, at: DocPath, issues: Issues, maxLen: number): Predicate {
  // Cheap conditions first; all members must hold, so the order does not change the result.
  const cheap: Predicate[] = [];
  const costly: Predicate[] = [];
  if (m.tool !== undefined) {
    const re = issues.guard([...at, "tool"], () => nameMatcher(asList(m.tool!)));
    cheap.push(
      re === undefined
        ? () => false
        : (ctx) => {
            const name = ctx.toolNameLower;
            return name !== undefined && re(name);
          },
    );
  }
  if (m.tool_call !== undefined) cheap.push(compileToolCall(m.tool_call));
  if (m.depth !== undefined) {
    const t = compileNumberCondition(m.depth, [...at, "depth"], issues);
    cheap.push((ctx) => t(ctx.event.depth));
  }
  if (m.fields !== undefined) {
    for (const [text, cond] of Object.entries(m.fields)) {
      const p = compilePathOrIssue(text, [...at, "fields", text], issues, true);
      const t = compileFieldCondition(cond, [...at, "fields", text], issues, maxLen);
      if (p !== undefined) cheap.push(overPath(p, t));
    }
  }
  if (m.session !== undefined) cheap.push(compileSession(m.session, [...at, "session"], issues));
  if (m.not !== undefined) {
    const inner = compileMatch(m.not, [...at, "not"], issues, maxLen);
    costly.push((ctx) => !inner(ctx));
  }
  if (m.all !== undefined) {
    const inner = m.all.map((x, k) => compileMatch(x, [...at, "all", k], issues, maxLen));
    costly.push(andP(inner));
  }
  if (m.any !== undefined) {
    const inner = m.any.map((x, k) => compileMatch(x, [...at, "any", k], issues, maxLen));
    costly.push((ctx) => {
      for (const p of inner) if (p(ctx)) return true;
      return false;
    });
  }
  if (m.path !== undefined) costly.push(compilePathMatch(m.path, [...at, "path"], issues, maxLen));
  if (m.shell !== undefined) costly.push(compileShell(m.shell, [...at, "shell"], issues, maxLen));
  if (m.secrets !== undefined) costly.push(compileSecrets(m.secrets, [...at, "secrets"], issues));
  return andP([...cheap, ...costly]);
}

// ---------------------------------------------------------------- decisions

const POLICY_ONLY_KEYS = new Set(["merge_patch", "redact_secrets"]);

/** Member names of the variant of `schema` whose `decision` tag is `tag`; undefined when the schema has no such variant. */
function variantKeys(schema: z.ZodType, tag: string): Set<string> | undefined {
  const options = (schema as unknown as { options?: readonly { shape?: Record<string, unknown> }[] }).options;
  if (options === undefined) return undefined;
  for (const option of options) {
    const literal = option.shape?.decision as { value?: unknown; values?: Set<unknown> } | undefined;
    if (literal === undefined) continue;
    if (literal.values?.has(tag) || literal.value === tag) return new Set(Object.keys(option.shape ?? {}));
  }
  return undefined;
}

/** Decision schema answering an event of this type: the typed one, or the generic Decision (also for batched notifications). */
export function decisionSchemaFor(type: EventType): z.ZodType {
  return EVENT_TABLE[type].decisionSchema ?? DecisionSchema;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const annotateReason = (reason: string | undefined, ruleId: string) =>
  reason === undefined || reason.length === 0 ? `rule: ${ruleId}` : `${reason} [rule: ${ruleId}]`;

type DecisionBuilder = (ctx: EvalContext, retryAfterMs?: number) => unknown;

/**
 * Checks `action` against the decision type of `type` and returns a builder. `ruleId` is added
 * as `metadata.rule` where the variant has `metadata`, else to `reason` where it has one.
 */
function compileDecision(
  action: PolicyAction,
  type: EventType,
  ruleId: string | undefined,
  rateLimited: boolean,
  at: DocPath,
  issues: Issues,
): DecisionBuilder | undefined {
  const schema = decisionSchemaFor(type);
  const tag = action.decision;
  const keys = variantKeys(schema, tag);
  const typeName = EVENT_TABLE[type].decisionTypeName ?? "Decision";
  if (keys === undefined) {
    const allowed = (schema as unknown as { options: { shape: { decision: { value: string } } }[] }).options.map(
      (o) => `\`${o.shape.decision.value}\``,
    );
    issues.add(
      [...at, "decision"],
      `decision \`${tag}\` is not valid for event type \`${type}\` (${typeName} allows ${allowed.join(", ")})`,
    );
    return undefined;
  }
  const { merge_patch: mergePatch, redact_secrets: redact, ...base } = action as Record<string, unknown> & PolicyAction;
  for (const key of Object.keys(base)) {
    if (!keys.has(key) && !POLICY_ONLY_KEYS.has(key)) {
      issues.add([...at, key], `unknown field \`${key}\` for decision \`${tag}\` of event type \`${type}\` (${typeName})`, true);
    }
  }
  const computesPayload = mergePatch !== undefined || (redact !== undefined && redact !== false);
  if (computesPayload && !keys.has("modified_payload")) {
    issues.add(
      [...at, mergePatch !== undefined ? "merge_patch" : "redact_secrets"],
      `merge_patch and redact_secrets need a decision with modified_payload (allow or modify of a generic event), not \`${tag}\` of \`${type}\``,
    );
    return undefined;
  }
  if (computesPayload && base.modified_payload !== undefined) {
    issues.add([...at, "modified_payload"], "give either modified_payload or merge_patch/redact_secrets, not both");
  }
  const computesRetry = rateLimited && keys.has("retry_after_ms");
  if (computesRetry && base.retry_after_ms !== undefined) {
    issues.add([...at, "retry_after_ms"], "retry_after_ms is computed from the token bucket for rate-limited rules; leave it out");
  }
  // Check the decision as written, with placeholders for the computed members.
  const sample: Record<string, unknown> = { ...base };
  if (computesPayload) sample.modified_payload = {};
  if (computesRetry) sample.retry_after_ms = 0;
  const checked = schema.safeParse(sample);
  if (!checked.success) {
    for (const issue of zodIssues(checked.error.issues, sample)) {
      issues.add([...at, ...issue.path], `${issue.message} (decision \`${tag}\` of ${typeName}, event type \`${type}\`)`);
    }
    return undefined;
  }
  const template: Record<string, unknown> = { ...base };
  if (ruleId !== undefined) {
    if (keys.has("metadata")) template.metadata = { ...base.metadata, rule: ruleId };
    else if (keys.has("reason")) template.reason = annotateReason(base.reason, ruleId);
  }
  if (!computesPayload && !computesRetry) {
    const frozen = deepFreeze(template);
    return () => frozen;
  }
  const redactOptions = typeof redact === "object" && redact !== null ? { kinds: redact.kinds } : {};
  return (ctx, retryAfterMs) => {
    const out: Record<string, unknown> = { ...template };
    if (computesRetry) out.retry_after_ms = retryAfterMs ?? 0;
    if (computesPayload) {
      let payload: unknown = ctx.event.payload;
      if (redact !== undefined && redact !== false) payload = redactSecretsIn(payload, redactOptions);
      if (mergePatch !== undefined) payload = applyMergePatch(payload, mergePatch);
      out.modified_payload = payload;
    }
    return out;
  };
}

// ---------------------------------------------------------------- rules and policy

function compileRateLimit(r: RateLimit, ruleId: string): CompiledRateLimit {
  const burst = r.burst ?? r.rate;
  const scope = r.scope ?? "session";
  return { scope, rate: r.rate, intervalMs: r.interval_ms, burst, key: `${ruleId}\u0000${scope}/${r.rate}/${r.interval_ms}/${burst}` };
}

function compileRule(rule: PolicyRule, index: number, issues: Issues, maxLen: number): CompiledRule | undefined {
  const at: DocPath = ["rules", index];
  const events = new Set<EventType>(typeof rule.events === "string" ? [rule.events] : rule.events);
  const test = rule.match === undefined ? () => true : compileMatch(rule.match, [...at, "match"], issues, maxLen);
  const rateLimit = rule.rate_limit === undefined ? undefined : compileRateLimit(rule.rate_limit, rule.id);
  const action: PolicyAction | undefined = rule.action ?? (rateLimit !== undefined ? { decision: "defer" } : undefined);
  if (action === undefined) {
    issues.add(at, "missing field `action` (only rules with rate_limit may leave it out; they defer)");
    return undefined;
  }
  const builders = new Map<EventType, DecisionBuilder>();
  for (const type of events) {
    const b = compileDecision(action, type, rule.id, rateLimit !== undefined, rule.action === undefined ? at : [...at, "action"], issues);
    if (b !== undefined) builders.set(type, b);
  }
  return {
    id: rule.id,
    index,
    events,
    test,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    decide(type, ctx, retryAfterMs) {
      return builders.get(type)!(ctx, retryAfterMs);
    },
  };
}

export interface CompileOptions {
  /** Overrides `settings.workspace_root`. */
  workspaceRoot?: string;
  /** Overrides `settings.max_match_length`. */
  maxMatchLength?: number;
}

/** Compiles a validated policy; returns the compiled data or the list of issues (paths only, no positions). */
export function compileValidated(
  policy: PolicyFile,
  options: CompileOptions = {},
): { ok: true; data: CompiledPolicyData } | { ok: false; issues: PolicyIssue[] } {
  const issues = new Issues((p) => {
    if (p[0] !== "rules" || typeof p[1] !== "number") return undefined;
    return policy.rules[p[1]]?.id;
  });
  const maxLen = options.maxMatchLength ?? policy.settings?.max_match_length ?? DEFAULT_MAX_MATCH_LENGTH;
  const seen = new Map<string, number>();
  const rules: CompiledRule[] = [];
  policy.rules.forEach((rule, index) => {
    const previous = seen.get(rule.id);
    if (previous !== undefined) issues.add(["rules", index, "id"], `duplicate rule id \`${rule.id}\` (first used by rules[${previous}])`);
    else seen.set(rule.id, index);
    if (rule.enabled === false) return;
    const compiled = compileRule(rule, index, issues, maxLen);
    if (compiled !== undefined) rules.push(compiled);
  });
  let defaultDecision: unknown = Object.freeze({ decision: "allow" });
  if (policy.default !== undefined) {
    const { merge_patch: mp, redact_secrets: rs } = policy.default;
    if (mp !== undefined || (rs !== undefined && rs !== false)) {
      issues.add(["default"], "the default decision cannot use merge_patch or redact_secrets");
    } else {
      const b = compileDecision(policy.default, "pre_action", undefined, false, ["default"], issues);
      if (b !== undefined) defaultDecision = b(undefined as never);
    }
  }
  if (issues.list.length > 0) return { ok: false, issues: issues.list };
  const byType = new Map<EventType, CompiledRule[]>();
  for (const rule of rules) {
    for (const type of rule.events) {
      const list = byType.get(type) ?? [];
      list.push(rule);
      byType.set(type, list);
    }
  }
  const s = policy.settings;
  return {
    ok: true,
    data: {
      policy,
      rules,
      byType,
      defaultDecision,
      settings: {
        workspaceRoot: options.workspaceRoot ?? s?.workspace_root,
        maxMatchLength: maxLen,
        ...(s?.max_sessions === undefined ? {} : { maxSessions: s.max_sessions }),
        ...(s?.max_agents === undefined ? {} : { maxAgents: s.max_agents }),
        ...(s?.state_ttl_ms === undefined ? {} : { stateTtlMs: s.state_ttl_ms }),
      },
    },
  };
}
