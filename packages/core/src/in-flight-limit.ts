/**
 * A per-connection limit on requests being handled, shared by the stream and WebSocket server
 * transports (stdio, Unix socket, WebSocket). A connection with `max` requests received and not
 * yet answered (an answer counts once the transport has written it) stops being read until
 * answers go out; its peer sees ordinary pipe, socket or TCP backpressure. Messages already read
 * (the rest of the chunk that reached the limit) wait here, in order, and are handed on as
 * answers go out, so handlers never see more than `max` requests of one connection at once, and a
 * peer that pipelines without reading its answers holds at most `max` answers and one read chunk
 * in the harness's memory.
 */
import type { ConnectionActivity } from "./connection-roster.js";
import { LargeIntegerId } from "./large-id.js";
import type { JsonRpcId, JsonRpcMessage } from "./schema/jsonrpc.js";
import type { Transport, TransportInfo, TransportSendOptions } from "./transport.js";

/** Requests one connection may have in handling at once, unless configured otherwise. */
export const DEFAULT_MAX_IN_FLIGHT = 256;

/** How the limiter stops and restarts reading a connection (the transport's stream or socket). */
export interface ReadGate {
  pause(): void;
  resume(): void;
}

function requestId(message: unknown): JsonRpcId | undefined {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (typeof m.method !== "string") return undefined;
  const id = m.id;
  if (id instanceof LargeIntegerId) return id as unknown as JsonRpcId; // the answer carries this same object
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : undefined;
}

function responseId(message: JsonRpcMessage): JsonRpcId | undefined {
  const m = message as Record<string, unknown>;
  if ("method" in m) return undefined;
  const id = m.id;
  if (id instanceof LargeIntegerId) return id as unknown as JsonRpcId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/**
 * Wraps `inner` (as AhpServer sees it) so that at most `max` requests are in flight; `gate`
 * stops and restarts reading. `onlimit` is called the first time the limit is reached.
 */
/** Wraps a server-side transport so that at most `max` of its requests are in handling at once (see the module comment). */
export function limitInFlight(
  inner: Transport,
  max: number,
  gate: ReadGate,
  onlimit?: (inFlight: number) => void,
  activity?: ConnectionActivity,
): Transport {
  const pending = new Map<JsonRpcId, number>();
  let count = 0;
  let paused = false;
  let reported = false;
  let onmessage: ((message: unknown) => void) | undefined;
  /** Messages read while at the limit, handed on in order as answers go out. */
  let backlog: unknown[] = [];
  const deliver = (message: unknown) => {
    const id = requestId(message);
    if (id !== undefined) {
      pending.set(id, (pending.get(id) ?? 0) + 1);
      count++;
      if (activity !== undefined) activity.inFlight = count;
    }
    onmessage?.(message);
  };
  const settle = (id: JsonRpcId) => {
    const n = pending.get(id);
    if (n === undefined) return;
    if (n <= 1) pending.delete(id);
    else pending.set(id, n - 1);
    count--;
    if (activity !== undefined) {
      activity.inFlight = count;
      // Idle time counts from the last answer too: a long decision is not silence.
      activity.lastActive = Date.now();
    }
    while (backlog.length > 0 && count < max) deliver(backlog.shift());
    if (paused && count < max && backlog.length === 0) {
      paused = false;
      gate.resume();
    }
  };
  inner.onmessage = (message) => {
    if (activity !== undefined) activity.lastActive = Date.now();
    if (count >= max || backlog.length > 0) {
      backlog.push(message);
      if (!paused) {
        paused = true;
        gate.pause();
      }
      if (!reported) {
        reported = true;
        onlimit?.(count);
      }
      return;
    }
    deliver(message);
    if (!paused && count >= max) {
      paused = true;
      gate.pause();
    }
  };
  return {
    get info(): TransportInfo | undefined {
      return inner.info;
    },
    get onmessage() {
      return onmessage;
    },
    set onmessage(handler) {
      onmessage = handler;
    },
    get onparseerror() {
      return inner.onparseerror;
    },
    set onparseerror(handler) {
      inner.onparseerror = handler;
    },
    get onerror() {
      return inner.onerror;
    },
    set onerror(handler) {
      inner.onerror = handler;
    },
    get onclose() {
      return inner.onclose;
    },
    set onclose(handler) {
      inner.onclose =
        handler === undefined
          ? undefined
          : (error) => {
              backlog = [];
              handler(error);
            };
    },
    start: () => inner.start(),
    close: () => inner.close(),
    send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
      const write = inner.send(message, options);
      const id = responseId(message);
      if (id !== undefined && pending.has(id)) {
        const done = () => settle(id);
        write.then(done, done);
      }
      return write;
    },
  };
}
