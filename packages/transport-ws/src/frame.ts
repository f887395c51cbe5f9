/** Decoding of one incoming WebSocket frame, shared by the client and server sides. */
import type { RawData } from "ws";
import { AhpLocalError, parseJsonText, toError, type MessageLimits, type Transport } from "@ahp/core";

type Receiver = Pick<Transport, "onmessage" | "onparseerror" | "onerror">;

/**
 * Hands one frame to `receiver`: a text frame's JSON to `onmessage`, undecodable text to
 * `onparseerror` (or `onerror`), and a binary frame to `onerror` (AHP messages are text frames;
 * the reference ignores binary ones). Returns the decoded value, if any.
 */
export function deliverFrame(receiver: Receiver, data: RawData, isBinary: boolean, limits: MessageLimits): unknown {
  if (isBinary) {
    receiver.onerror?.(new AhpLocalError("PROTOCOL_ERROR", "binary WebSocket frame ignored (AHP messages are text frames)"));
    return undefined;
  }
  const buffer = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  let value: unknown;
  try {
    value = parseJsonText(buffer.toString("utf8"), limits, buffer.length);
  } catch (error) {
    if (receiver.onparseerror !== undefined) receiver.onparseerror(error as never);
    else receiver.onerror?.(toError(error));
    return undefined;
  }
  try {
    receiver.onmessage?.(value);
  } catch (error) {
    receiver.onerror?.(toError(error));
  }
  return value;
}
