/** The `path` matcher: file paths of an event resolved against the workspace root, lexically. */
import path from "node:path";
import type { PathMatch } from "../schema.js";
import { normalizeShellPath } from "../shell.js";
import { compileFieldCondition, type DocPath, type Issues, type Predicate } from "./conditions.js";
import type { EvalContext } from "./context.js";
import { compileFieldList, compilePaths, DEFAULT_PATH_FIELDS, DEFAULT_ROOT_FIELDS, stringsAt } from "./fields.js";

export interface Resolved {
  path: string;
  /** undefined when no workspace root is known. */
  inside: boolean | undefined;
}

const WINDOWS_ABS = /^(?:[A-Za-z]:[\\/]|\\\\)/;
/** A relative path with nothing to interpret: no `~`, `$`, URL, drive, backslash or trailing slash. */
const PLAIN_RELATIVE = /^[^/\\~$:]([^\\:]*[^/\\:])?$/;
/** An absolute POSIX path without a backslash or a trailing slash. */
const PLAIN_ABSOLUTE = /^\/[^\\]*[^/\\]$/;
/** A `.` or `..` segment. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;
/** An absolute POSIX root that is not a Windows one. */
const POSIX_ROOT = /^\/(?!\/)[^\\]*$/;

/** Lexical resolution of a file path against the workspace root (symbolic links are not followed). */
export function resolveWorkspacePath(file: string, root: string | undefined): Resolved {
  // Most paths are plain relative ones (`src/index.ts`) under a POSIX root: joined without path.resolve.
  if (root !== undefined && PLAIN_RELATIVE.test(file) && !DOT_SEGMENT.test(file) && !file.includes("//") && POSIX_ROOT.test(root)) {
    const base = rootBase(root, false);
    return { path: base === "/" ? `/${file}` : `${base}/${file}`, inside: true };
  }
  // An absolute path with nothing to normalize under a POSIX root: compared as it is.
  if (root !== undefined && PLAIN_ABSOLUTE.test(file) && !DOT_SEGMENT.test(file) && !file.includes("//") && POSIX_ROOT.test(root)) {
    const base = rootBase(root, false);
    return { path: file, inside: base === "/" || file === base || (file.startsWith(base) && file.charCodeAt(base.length) === 47) };
  }
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

/**
 * {@link resolveWorkspacePath} remembered for the evaluation: the `path` matcher and the
 * `tool_call.writes` matchers usually resolve the same path of the same call.
 */
export function resolveOnce(ctx: EvalContext, file: string, root: string | undefined): Resolved {
  const last = ctx.lastResolved;
  if (last !== undefined && last.file === file && last.root === root) return last.resolved;
  const resolved = resolveWorkspacePath(file, root);
  ctx.lastResolved = { file, root, resolved };
  return resolved;
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

export function compilePathMatch(m: PathMatch, at: DocPath, issues: Issues, maxLen: number): Predicate {
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
    const resolved = files.length === 1 ? [resolveOnce(ctx, files[0]!, root)] : files.map((f) => resolveOnce(ctx, f, root));
    if (outside === true && !resolved.some((r) => r.inside === false)) return false;
    if (outside === false && !resolved.every((r) => r.inside === true)) return false;
    if (resolvedTest !== undefined && !resolved.some((r) => resolvedTest(r.path))) return false;
    return true;
  };
}
