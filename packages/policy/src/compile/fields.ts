/**
 * Field paths of the event (`payload.arguments.command`, `payload.paths.*`): the default lists
 * of the content matchers, and field lists whose strings are read once per evaluation.
 */
import type { AhpEvent } from "@ahp/core";
import { compilePath, type CompiledPath } from "../paths.js";
import type { DocPath, Issues, Predicate, ValueTest } from "./conditions.js";
import type { EvalContext } from "./context.js";

/** Defaults of the content matchers (documented in the README). */
export const DEFAULT_SHELL_FIELDS = Object.freeze([
  "payload.arguments.command",
  "payload.arguments.cmd",
  "payload.arguments.script",
  "payload.command",
  "payload.input.command",
]);
/**
 * Where a `path` condition without `fields` looks for file paths: the path members of common
 * file tools' arguments (`path`, `file_path`, `filePath`, `target_file`, every entry of `paths`,
 * every edit of a multi-edit) and of the payload itself.
 */
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
/**
 * Where a `path` condition without `root_fields` reads the workspace root when
 * `settings.workspace_root` is not set: the first non-empty string of these wins.
 */
export const DEFAULT_ROOT_FIELDS = Object.freeze([
  "payload.working_directory",
  "payload.cwd",
  "payload.workspace",
  "context.capabilities.workspace",
  "metadata.workspace",
]);
/** Where the tool name is read, in this order. */
export const TOOL_NAME_FIELDS = Object.freeze(["payload.tool_name", "payload.tool", "payload.name"]);

/**
 * Default of `settings.max_match_length`: strings are cut to this many characters before a
 * `glob`, `regex` or `contains` test, and longer command lines are not analysed by `shell`
 * conditions (they match only `opaque: too-long`).
 */
export const DEFAULT_MAX_MATCH_LENGTH = 65_536;

export function compilePathOrIssue(text: string, at: DocPath, issues: Issues, key = false): CompiledPath | undefined {
  try {
    return compilePath(text);
  } catch (error) {
    issues.add(at, (error as Error).message, key);
    return undefined;
  }
}

/** Test over every value a path yields: true when any value passes (or, when none exists, when `undefined` passes). */
export function overPath(p: CompiledPath, test: ValueTest): Predicate {
  if (!p.multi) return (ctx) => test(p.get(ctx.event));
  return (ctx) => {
    const values: unknown[] = [];
    p.collect(ctx.event, values);
    if (values.length === 0) return test(undefined);
    return values.some(test);
  };
}

/** Every string found at the paths (arrays of strings included). */
export function collectStrings(paths: readonly CompiledPath[], event: AhpEvent): string[] {
  const out: string[] = [];
  let values: unknown[] | undefined;
  for (const p of paths) {
    if (!p.multi) {
      addStrings(p.get(event), out);
      continue;
    }
    values ??= [];
    values.length = 0;
    p.collect(event, values);
    for (const v of values) addStrings(v, out);
  }
  return out;
}

/** Appends `v` when it is a string, or its string entries when it is an array. */
function addStrings(v: unknown, out: string[]): void {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const item of v) if (typeof item === "string") out.push(item);
}

/** A field list compiled once, whose strings are read once per evaluation however many rules use it. */
export interface FieldList {
  /** Small integer per distinct list of paths: the slot of its strings in an evaluation. */
  id: number;
  paths: CompiledPath[];
}

/** Ids of distinct field lists (bounded by the distinct lists in the policies compiled). */
export const FIELD_LIST_IDS = new Map<string, number>();

export const stringsAt = (list: FieldList, ctx: EvalContext): string[] => ctx.strings(list);

export function compilePaths(list: readonly string[], at: DocPath, issues: Issues): CompiledPath[] {
  return list.map((text, k) => compilePathOrIssue(text, [...at, k], issues)).filter((p): p is CompiledPath => p !== undefined);
}

export function compileFieldList(list: readonly string[], at: DocPath, issues: Issues): FieldList {
  const key = list.join("\u0000");
  let id = FIELD_LIST_IDS.get(key);
  if (id === undefined) {
    id = FIELD_LIST_IDS.size;
    FIELD_LIST_IDS.set(key, id);
  }
  return { id, paths: compilePaths(list, at, issues) };
}

/** The default shell fields, read by every shell matcher that gives no `fields`. */
export const DEFAULT_SHELL_FIELD_LIST: FieldList = {
  id: (() => {
    const key = DEFAULT_SHELL_FIELDS.join("\u0000");
    if (!FIELD_LIST_IDS.has(key)) FIELD_LIST_IDS.set(key, FIELD_LIST_IDS.size);
    return FIELD_LIST_IDS.get(key)!;
  })(),
  paths: DEFAULT_SHELL_FIELDS.map((text) => compilePath(text)),
};
