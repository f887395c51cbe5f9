/**
 * Directive applicability (adapter spec §1.8): a directive is honoured only on the hook and
 * decision the table lists; elsewhere it is dropped (not an error). `permitted_tools` with a
 * non-canonical entry is invalid as a whole and dropped with a warning; the verdict stays valid.
 */
import { HOOK_CATALOG, isCanonicalToolName, type DirectiveName, type HookPoint, type VerdictDecision } from "../catalog.js";
import type { Directives } from "../types.js";

/** Why a directive was dropped: a `debug` note (not applicable to this hook or decision) or a `warn` (invalid). */
export interface DirectiveNote {
  readonly level: "debug" | "warn";
  readonly message: string;
}

const KNOWN: readonly DirectiveName[] = ["inject_context", "permitted_tools", "strip_hooks"];

/**
 * Returns the directives that apply to `hookPoint` with `decision`, plus notes about what was
 * dropped. `x-ahp` and unknown (vendor) directives pass through unchanged.
 */
export function applicableDirectives(
  hookPoint: HookPoint,
  decision: VerdictDecision,
  directives: Directives | undefined,
): { directives: Directives | undefined; notes: DirectiveNote[] } {
  const notes: DirectiveNote[] = [];
  if (directives === undefined) return { directives: undefined, notes };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(directives)) {
    if (value === undefined) continue;
    if (!(KNOWN as readonly string[]).includes(key)) {
      out[key] = value;
      continue;
    }
    const name = key as DirectiveName;
    if (!HOOK_CATALOG[hookPoint].directives.includes(name) || decision !== "allow") {
      notes.push({ level: "debug", message: `directive ${name} ignored on ${hookPoint} ${decision}` });
      continue;
    }
    if (name === "permitted_tools") {
      const tools = value as unknown[];
      const bad = tools.filter((t) => !isCanonicalToolName(t));
      if (bad.length > 0) {
        notes.push({ level: "warn", message: `permitted_tools ignored: not canonical tool names: ${bad.map(String).join(", ")}` });
        continue;
      }
    }
    out[key] = value;
  }
  return { directives: Object.keys(out).length === 0 ? undefined : out, notes };
}

/** A conversation message as far as `inject_context` is concerned. */
export type ContextMessage = { role: string; content: string } | string;

/**
 * Applies an `inject_context` directive (spec §1.8) to a compacted context: `prepend` / `append`
 * add the content at that end of the conversation; `system` adds a separate system message at
 * the start. Returns a new array.
 */
export function applyInjectContext<M extends ContextMessage>(
  context: readonly M[],
  directive: { position: "prepend" | "append" | "system"; content: string } | undefined,
  make?: (content: string, position: "prepend" | "append" | "system") => M,
): M[] {
  if (directive === undefined) return [...context];
  const build =
    make ??
    ((content: string, position: string) =>
      (context.length > 0 && typeof context[0] === "string" ? content : { role: position === "system" ? "system" : "user", content }) as M);
  const message = build(directive.content, directive.position);
  return directive.position === "append" ? [...context, message] : [message, ...context];
}
