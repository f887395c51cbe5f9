/** A rule's `match`: every member compiled to a predicate, cheap ones first, combined with and/or/not. */
import { valueContainsSecret } from "@ahp/core";
import type { NumberCondition, PolicyMatchInput, SecretsMatch, SessionMatch, ToolCallMatch } from "../schema.js";
import type { ToolCall } from "../shell.js";
import {
  andP,
  asList,
  compileFieldCondition,
  compileNumberCondition,
  nameMatcher,
  type DocPath,
  type Issues,
  type Predicate,
} from "./conditions.js";
import { compilePath } from "../paths.js";
import type { EvalContext, SessionCounters } from "./context.js";
import { compilePathOrIssue, compilePaths, DEFAULT_ROOT_FIELDS, overPath } from "./fields.js";
import { compileShell } from "./shell.js";
import { compilePathMatch, resolveOnce } from "./workspace.js";

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

const ROOT_FIELDS = DEFAULT_ROOT_FIELDS.map((f) => compilePath(f));

/** The paths a file tool call changes, resolved once per evaluation whatever the number of rules asking. */
function resolvedWrites(ctx: EvalContext, call: ToolCall): readonly { path: string; inside: boolean | undefined }[] {
  ctx.resolvedWrites ??= new Map();
  let resolved = ctx.resolvedWrites.get(call);
  if (resolved === undefined) {
    const root = workspaceRootOf(ctx, call.cwd);
    resolved = call.writes.map((file) => resolveOnce(ctx, file, root));
    ctx.resolvedWrites.set(call, resolved);
  }
  return resolved;
}

/** The workspace root a file tool call is resolved against: the configured one, else the call's working directory, else the event's. */
function workspaceRootOf(ctx: EvalContext, cwd: string | undefined): string | undefined {
  if (ctx.settings.workspaceRoot !== undefined) return ctx.settings.workspaceRoot;
  if (cwd !== undefined && cwd.length > 0) return cwd;
  if (ctx.eventRoot === undefined) {
    ctx.eventRoot = null;
    for (const p of ROOT_FIELDS) {
      const v = p.get(ctx.event);
      if (typeof v === "string" && v.length > 0) {
        ctx.eventRoot = v;
        break;
      }
    }
  }
  return ctx.eventRoot ?? undefined;
}

/** `tool_call`: facts of the normalized tool calls; each member given must hold. */
function compileToolCall(m: ToolCallMatch, at: DocPath, issues: Issues, maxLen: number): Predicate {
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
  if (m.code !== undefined) {
    const want = m.code;
    tests.push((ctx) => ctx.calls.some((c) => c.code !== undefined) === want);
  }
  for (const key of ["writes", "writes_outside_workspace"] as const) {
    const cond = m[key];
    if (cond === undefined) continue;
    const t = compileFieldCondition(cond, [...at, key], issues, maxLen);
    const outsideOnly = key === "writes_outside_workspace";
    tests.push((ctx) => {
      for (const call of ctx.calls) {
        if (call.writes.length === 0) continue;
        for (const r of resolvedWrites(ctx, call)) {
          if (outsideOnly && r.inside === true) continue;
          if (t(r.path)) return true;
        }
      }
      return false;
    });
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
  if (m.tool_call !== undefined) cheap.push(compileToolCall(m.tool_call, [...at, "tool_call"], issues, maxLen));
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
