/**
 * Engine failures (adapter spec §2.2 failure catalogue). An engine-role component never turns
 * a failure into a verdict: it rejects with an {@link EngineFailure}, and the component in the
 * host role applies its failure policy.
 */

export type FailureCause =
  /** Transport error or closed connection. */
  | "transport"
  /** No answer within the effective timeout. */
  | "timeout"
  /** The engine reported a failure (JSON-RPC error object, in-process rejection, exit without verdict). */
  | "engine_error"
  /** Response id mismatch, wrong `jsonrpc`, missing `result`. */
  | "protocol"
  /** The response did not validate (verdict §1.9, AHP result §5.5). */
  | "invalid_response"
  /** The event sent to an engine-role component did not validate (§1.9). */
  | "invalid_event"
  /** The harness lacks the capability the hook needs (§5.3). */
  | "uncovered_hook"
  /** The version check did not succeed (incompatible, handshake failed): no usable engine. */
  | "incompatible"
  /** Anything else that went wrong inside the adapter. */
  | "internal";

const BRAND = Symbol.for("@ahp/aarts.EngineFailure");

/**
 * An engine-role component could not produce a verdict (spec §2.2). The bridge rejects with it
 * instead of answering; {@link AartsHost} (the host role) catches it and applies its failure policy
 * (`fail-open` ⇒ synthetic `allow`, `fail-closed` ⇒ synthetic `deny`). Recognise it across
 * package copies with {@link EngineFailure.isInstance}, not `instanceof`.
 */
export class EngineFailure extends Error {
  /** What went wrong (spec §2.2 failure catalogue). */
  readonly failureCause: FailureCause;
  /** Id of the engine that failed, when known. */
  readonly engineId?: string;
  declare readonly [BRAND]: true;

  /**
   * @param failureCause - what went wrong
   * @param message - short cause; appears in the synthetic verdict's reason
   * @param options - `engineId` of the failing engine and the underlying `cause`
   */
  constructor(failureCause: FailureCause, message: string, options?: { engineId?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "EngineFailure";
    this.failureCause = failureCause;
    if (options?.engineId !== undefined) this.engineId = options.engineId;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `true` for an EngineFailure, also one created by another copy of this package (brand check). */
  static isInstance(value: unknown): value is EngineFailure {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** Wraps anything thrown by an engine; keeps an EngineFailure as is. */
  static from(error: unknown, engineId?: string): EngineFailure {
    if (EngineFailure.isInstance(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new EngineFailure("engine_error", message || "engine failed", {
      ...(engineId === undefined ? {} : { engineId }),
      cause: error,
    });
  }
}
