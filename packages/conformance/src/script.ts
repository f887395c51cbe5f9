/**
 * The script protocol of the conformance harness: what a handler does is written into the
 * message it handles, so that a test in one process can drive a harness in another.
 *
 * - generic events (`pre_action`, `pre_prompt`, `handshake`/`query` as events, every batch
 *   element) and notifications: `payload.script`;
 * - the 8 specialized events (their payloads are validated, so no extra member goes there):
 *   `metadata.script`;
 * - `ahp/query` (any `query_type` outside `conformance/`): `payload.script`.
 *
 * Steps, in this order: wait `delay_ms` (cut short when the handler's signal aborts), throw
 * `throw`, return `result` unchecked when the member is present, answer an echo when `echo`
 * is true, answer `decision` (events) or `response` (queries), else the default answer.
 */
import { z } from "zod";

export interface ConformanceScript {
  /** Decision to answer (a generic Decision, or the typed decision of a specialized event). */
  decision?: unknown;
  /** Queries: the whole QueryResponse to answer. */
  response?: unknown;
  /**
   * Returned exactly as given, without any check by the harness (e.g. `null`), to exercise the
   * server's own result validation. Only the presence of the member counts.
   */
  result?: unknown;
  /** Answer `{"decision":"allow","modified_payload":<the payload without its script>}`. */
  echo?: boolean;
  /** Fail with an Error carrying this message. */
  throw?: string;
  /** Wait this many milliseconds first (integer, at most the harness's `maxScriptDelayMs`). */
  delay_ms?: number;
}

/** Default cap of `delay_ms`. */
export const DEFAULT_MAX_SCRIPT_DELAY_MS = 30_000;

const scriptSchema = (maxDelayMs: number) =>
  z.object({
    decision: z.unknown().optional(),
    response: z.unknown().optional(),
    result: z.unknown().optional(),
    echo: z.boolean().optional(),
    throw: z.string().optional(),
    delay_ms: z.int().min(0).max(maxDelayMs).optional(),
  });

/** A parsed script plus whether `result` was present (it may legitimately be `null`). */
export interface ParsedScript {
  script: ConformanceScript;
  hasResult: boolean;
}

/** Thrown for a script that does not parse; the handler fails with its message. */
export class ScriptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScriptError";
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** Reads `container.script`; `undefined` when there is none. Throws {@link ScriptError} when it is malformed. */
export function readScript(container: unknown, maxDelayMs = DEFAULT_MAX_SCRIPT_DELAY_MS): ParsedScript | undefined {
  if (!isRecord(container) || !Object.prototype.hasOwnProperty.call(container, "script")) return undefined;
  const raw = container.script;
  const parsed = scriptSchema(maxDelayMs).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at script.${issue.path.join(".")}`;
    throw new ScriptError(`invalid conformance script${where}: ${issue?.message ?? "not an object"}`);
  }
  return { script: parsed.data, hasResult: isRecord(raw) && Object.prototype.hasOwnProperty.call(raw, "result") };
}

/** The payload without its `script` member (what an echo answers). */
export function withoutScript(payload: unknown): unknown {
  if (!isRecord(payload) || !Object.prototype.hasOwnProperty.call(payload, "script")) return payload;
  const { script: _script, ...rest } = payload;
  return rest;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. Never leaves a timer behind. */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs a script: delay, throw, then the answer (`result` as is, `echo`, the `pick`ed member, or
 * the fallback). `signal` may be a getter: it is only read when the script waits.
 */
export async function runScript(
  parsed: ParsedScript | undefined,
  signal: AbortSignal | (() => AbortSignal),
  options: { pick: "decision" | "response"; fallback: () => unknown; echoOf?: () => unknown },
): Promise<unknown> {
  if (parsed === undefined) return options.fallback();
  const { script, hasResult } = parsed;
  if (script.delay_ms !== undefined) await abortableDelay(script.delay_ms, typeof signal === "function" ? signal() : signal);
  if (script.throw !== undefined) throw new Error(script.throw);
  if (hasResult) return script.result;
  if (script.echo === true && options.echoOf !== undefined) return { decision: "allow", modified_payload: options.echoOf() };
  const picked = script[options.pick];
  if (picked !== undefined) return picked;
  return options.fallback();
}
