/** zod issues as readable policy issues (one sentence each, with the path kept separately). */
import { describeIssues } from "@ahp/core";
import type { z } from "zod";
import type { PolicyIssue } from "./errors.js";

type DocPath = readonly (string | number)[];

export type LocatedIssue = PolicyIssue & { key?: boolean };

function valueAt(root: unknown, path: DocPath): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}

/** One issue per problem; `key` marks issues whose position is the member name (unknown fields). */
export function zodIssues(issues: readonly z.core.$ZodIssue[], root: unknown): LocatedIssue[] {
  const out: LocatedIssue[] = [];
  for (const raw of issues) {
    const issue = deepestBranch(raw);
    const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
    const value = valueAt(root, path);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ message: `unknown field \`${key}\``, path: [...path, key], key: true });
      continue;
    }
    let message: string;
    if (
      (issue.code === "invalid_type" || issue.code === "invalid_union" || issue.code === "invalid_value") &&
      value === undefined &&
      path.length > 0 &&
      valueAt(root, path.slice(0, -1)) !== undefined
    ) {
      message = `missing field \`${String(path[path.length - 1])}\``;
    } else if (issue.code === "invalid_union") {
      const expected = [
        ...new Set(
          issue.errors.flatMap((b) => (b[0]?.code === "invalid_type" ? [b[0].expected === "array" ? "a list" : `a ${b[0].expected}`] : [])),
        ),
      ];
      message = `invalid value ${JSON.stringify(value) ?? "undefined"}${expected.length > 0 ? `, expected ${expected.join(" or ")}` : ""}`;
    } else if (issue.code === "invalid_value" && (path[path.length - 1] === "events" || path[path.length - 2] === "events")) {
      message = `unknown event type ${JSON.stringify(value)}, expected one of ${issue.values.map((v) => String(v)).join(", ")}`;
    } else if (issue.code === "invalid_format" && path[path.length - 1] === "id") {
      message = `invalid rule id ${JSON.stringify(value)}: use letters, digits and _ . : - (starting with a letter or digit)`;
    } else {
      message = describeIssues([{ ...issue, path: [] }], value);
    }
    out.push({ message, path });
  }
  return out;
}

const depthOf = (list: readonly z.core.$ZodIssue[]) =>
  Math.max(0, ...list.map((i) => (i.code === "invalid_type" && i.path.length === 0 ? 0 : i.path.length + 1)));

/**
 * For a union (e.g. "a string or a list of strings"), the branch that got furthest names the
 * real problem and its position: `events: [pre_action, pre_acton]` points at `pre_acton`.
 */
function deepestBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  const best = [...issue.errors].sort((a, b) => depthOf(b) - depthOf(a))[0];
  const first = best?.[0];
  if (best === undefined || first === undefined) return issue;
  if (depthOf(best) <= 1) {
    // `events: pre_acton`: the string branch rejected the value itself while every other branch
    // only wanted another type, so the string branch names the problem (as the list form does).
    const valued = issue.errors.filter((b) => b[0] !== undefined && !(b[0].code === "invalid_type" && b[0].path.length === 0));
    const only = valued.length === 1 ? valued[0]?.[0] : undefined;
    if (only === undefined || only.code !== "invalid_value") return issue;
    return { ...only, path: [...issue.path, ...only.path] };
  }
  return deepestBranch({ ...first, path: [...issue.path, ...first.path] });
}
