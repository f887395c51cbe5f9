/** Turning WebSocket close codes and `ws` errors into causes a caller can act on. */
import { AhpLocalError, toError } from "@ahp/core";

const CLOSE_CODE_NAMES: Record<number, string> = {
  1000: "normal closure",
  1001: "going away",
  1002: "protocol error",
  1003: "unsupported data",
  1005: "no status",
  1006: "abnormal closure",
  1007: "invalid payload data",
  1008: "policy violation",
  1009: "message too big",
  1010: "mandatory extension",
  1011: "internal error",
  1012: "service restart",
  1013: "try again later",
  1015: "TLS handshake failed",
};

/** `1009 (message too big)` */
export function describeCloseCode(code: number): string {
  const name = CLOSE_CODE_NAMES[code];
  return name === undefined ? String(code) : `${code} (${name})`;
}

/** The cause recorded when the peer closed the connection with `code` and no local error preceded it. */
/** The close reason (code 1001) of a connection the harness closed for its idle timeout. */
export const IDLE_TIMEOUT_REASON = "idle timeout";
/** The close reason (code 1001) of the longest-idle connection closed to make room at the cap. */
export const IDLE_EVICTED_REASON = "connection limit: closed as the longest idle";

/**
 * Whether a close is the harness closing an idle connection: it decided so with nothing in flight
 * and reads nothing after deciding, so a request that crossed the close was never handled.
 */
export const isIdleClose = (code: number, reason: string): boolean =>
  code === 1001 && (reason === IDLE_TIMEOUT_REASON || reason === IDLE_EVICTED_REASON);

export function closeCause(side: "server" | "client", code: number, reason: string): AhpLocalError {
  const text = `WebSocket closed by the ${side} with code ${describeCloseCode(code)}${reason ? `: ${reason}` : ""}`;
  const details = { closeCode: code, closeReason: reason };
  if (code === 1009) {
    return new AhpLocalError("MESSAGE_TOO_LARGE", `${text}; a message exceeded the ${side}'s size limit`, { details });
  }
  return new AhpLocalError("CONNECTION_CLOSED", text, { details });
}

/** Maps an `error` event of a `ws` socket to a cause. */
export function errorCause(error: unknown): AhpLocalError {
  if (AhpLocalError.isInstance(error)) return error;
  const e = toError(error);
  const code = (e as { code?: unknown }).code;
  const details = typeof code === "string" ? { code } : undefined;
  if (code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
    return new AhpLocalError("MESSAGE_TOO_LARGE", `WebSocket message too large: ${e.message}`, {
      cause: e,
      ...(details ? { details } : {}),
    });
  }
  if (typeof code === "string" && code.startsWith("WS_ERR_")) {
    return new AhpLocalError("PROTOCOL_ERROR", `WebSocket protocol error: ${e.message}`, { cause: e, ...(details ? { details } : {}) });
  }
  return new AhpLocalError("CONNECTION_CLOSED", `WebSocket connection failed: ${e.message}`, { cause: e, ...(details ? { details } : {}) });
}
