/**
 * The SDK connection's own sends over a stream of ours (ADR 0111): every message the connection
 * is asked to send (responses, requests, notifications, protocol errors) is written straight to
 * the stream by its direct writer when nothing the connection was asked to send before is still
 * on its way, and goes through the SDK's write chain (and is counted as on its way) otherwise.
 */
import type { DirectWriter } from "./node-stream.js";

const SENT: Promise<void> = Promise.resolve();

/**
 * Routes the sends of the SDK connection under `handle` (an `AgentConnection` or
 * `ClientConnection`) through `direct`; false, and nothing changed, when the connection has no
 * `sendMessage` or `signal` to hook (another SDK version): then everything goes through the SDK.
 */
export function routeSdkSends(handle: unknown, direct: DirectWriter): boolean {
  const connection = (handle as { connection?: { sendMessage?: unknown; signal?: unknown } }).connection;
  const send = connection?.sendMessage;
  const signal = connection?.signal;
  if (connection === undefined || typeof send !== "function" || !(signal instanceof AbortSignal)) return false;
  const original = send as (message: unknown) => Promise<void>;
  connection.sendMessage = (message: unknown): Promise<void> => {
    if (!signal.aborted) {
      try {
        if (direct.write(message)) return SENT;
      } catch {
        // not serializable: the SDK's path fails on it the same way and closes the connection
      }
    }
    const sent = original.call(connection, message);
    direct.sdkSend(sent);
    return sent;
  };
  return true;
}
