/**
 * Field lists of the event (`payload.arguments.command`, `payload.paths.*`): the default lists
 * of the content matchers, and how the strings of a list are read, once per evaluation however
 * many rules use it. What an evaluation knows (./context.ts) and what a policy compiles
 * (./fields.ts) both build on these.
 */
import type { AhpEvent } from "@ahp/core";
import { compilePath, step, type CompiledPath } from "../paths.js";

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

/**
 * Every string found at the paths of a field list (arrays of strings included), in the order of
 * its paths. A path reuses the values the previous single-valued path reached on the segments
 * they share (`payload.arguments` is read once for `payload.arguments.path`,
 * `payload.arguments.file_path` …): the same answer as reading each path on its own.
 */
export function collectStrings(list: FieldList, event: AhpEvent): string[] {
  const out: string[] = [];
  const { paths, walks } = list;
  let values: unknown[] | undefined;
  // reached[d]: the value after d segments of the last single-valued path; valid up to `depth`.
  const reached: unknown[] = [event];
  let depth = 0;
  for (let k = 0; k < paths.length; k++) {
    const p = paths[k]!;
    const walk = walks[k]!;
    if (walk.segments === undefined) {
      values ??= [];
      values.length = 0;
      p.collect(event, values);
      for (const v of values) addStrings(v, out);
      continue;
    }
    const segments = walk.segments;
    let d = walk.shared < depth ? walk.shared : depth;
    let value = reached[d];
    while (d < segments.length && value !== undefined) {
      value = step(value, segments[d]!);
      reached[++d] = value;
    }
    depth = d;
    addStrings(value, out);
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
  /** Per path: its segments (undefined for a multi-valued path) and how many leading ones it shares with the path before it. */
  walks: PathWalk[];
}

interface PathWalk {
  segments: readonly string[] | undefined;
  shared: number;
}

/** The walks of {@link collectStrings}: segments, and the prefix each single-valued path shares with the previous one. */
function walksOf(paths: readonly CompiledPath[]): PathWalk[] {
  let previous: readonly string[] | undefined;
  return paths.map((p) => {
    if (p.multi) {
      previous = undefined;
      return { segments: undefined, shared: 0 };
    }
    const segments = p.text.split(".");
    let shared = 0;
    if (previous !== undefined)
      while (shared < segments.length && shared < previous.length && segments[shared] === previous[shared]) shared++;
    previous = segments;
    return { segments, shared };
  });
}

/** Ids of distinct field lists (bounded by the distinct lists in the policies compiled). */
export const FIELD_LIST_IDS = new Map<string, number>();

/** The field list of `texts`, its paths compiled: the same id for the same texts, in every policy. */
export function fieldList(texts: readonly string[], paths: CompiledPath[]): FieldList {
  const key = texts.join("\u0000");
  let id = FIELD_LIST_IDS.get(key);
  if (id === undefined) {
    id = FIELD_LIST_IDS.size;
    FIELD_LIST_IDS.set(key, id);
  }
  return { id, paths, walks: walksOf(paths) };
}

/** The default shell fields, read by every shell matcher that gives no `fields`. */
export const DEFAULT_SHELL_FIELD_LIST: FieldList = {
  ...fieldList(
    DEFAULT_SHELL_FIELDS,
    DEFAULT_SHELL_FIELDS.map((text) => compilePath(text)),
  ),
};
