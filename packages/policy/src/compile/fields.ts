/**
 * Field paths of a policy compiled: paths and field lists given by rules, and the conditions
 * over the values they reach. The lists themselves and their defaults are in ./field-lists.ts.
 */
import { compilePath, type CompiledPath } from "../paths.js";
import type { DocPath, Issues, Predicate, ValueTest } from "./conditions.js";
import type { EvalContext } from "./context.js";
import { fieldList, type FieldList } from "./field-lists.js";

export {
  DEFAULT_MAX_MATCH_LENGTH,
  DEFAULT_PATH_FIELDS,
  DEFAULT_ROOT_FIELDS,
  DEFAULT_SHELL_FIELD_LIST,
  DEFAULT_SHELL_FIELDS,
  TOOL_NAME_FIELDS,
  type FieldList,
} from "./field-lists.js";

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

export const stringsAt = (list: FieldList, ctx: EvalContext): string[] => ctx.strings(list);

export function compilePaths(list: readonly string[], at: DocPath, issues: Issues): CompiledPath[] {
  return list.map((text, k) => compilePathOrIssue(text, [...at, k], issues)).filter((p): p is CompiledPath => p !== undefined);
}

export function compileFieldList(list: readonly string[], at: DocPath, issues: Issues): FieldList {
  return fieldList(list, compilePaths(list, at, issues));
}
