/** Helpers that make correct events easy: timestamps, ids and depth filled in, payloads typed per event type. */
import { randomUUID } from "node:crypto";
import type { PayloadInputFor } from "./event-table.js";
import type { EventContextInput } from "./schema/context.js";
import type { AhpEventInput, EventType } from "./schema/event.js";

/**
 * The envelope fields that `createEvent` and `eventFactory` put around a payload; `depth` defaults to 0 and `timestamp` to the
 * current time (UTC).
 */
export interface EventFields {
  sessionId: string;
  agentId: string;
  /** Nesting level of the emitting agent; default 0. Must be an integer. */
  depth?: number;
  /** RFC 3339 timestamp; default: now, in UTC. */
  timestamp?: string;
  context?: EventContextInput;
  metadata?: Record<string, unknown>;
}

/** An AhpEvent of one known type with its typed payload. */
export interface TypedEvent<T extends EventType> {
  event_type: T;
  session_id: string;
  agent_id: string;
  timestamp: string;
  depth: number;
  payload: PayloadInputFor<T>;
  context?: AhpEventInput["context"];
  metadata?: AhpEventInput["metadata"];
}

let lastMs = Number.NaN;
let lastText = "";

/**
 * Current time as RFC 3339 UTC with millisecond precision. Formatting costs more than the event
 * around it, so the text is reused while the millisecond is the same.
 */
export const rfc3339Now = (): string => {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
};

/** A fresh random id (UUID v4), as the reference uses for sessions, agents and requests. */
export const newId = (): string => randomUUID();

/** Builds one event; `context`/`metadata` are included only when given. */
export function createEvent<T extends EventType>(type: T, payload: PayloadInputFor<T>, fields: EventFields): TypedEvent<T> {
  const event: TypedEvent<T> = {
    event_type: type,
    session_id: fields.sessionId,
    agent_id: fields.agentId,
    timestamp: fields.timestamp ?? rfc3339Now(),
    depth: fields.depth ?? 0,
    payload,
  };
  if (fields.context !== undefined) event.context = fields.context;
  if (fields.metadata !== undefined) event.metadata = fields.metadata;
  return event;
}

/** An event factory bound to one session, agent and depth: `const ev = eventFactory({...}); ev("pre_action", {...})`. */
export function eventFactory(defaults: EventFields) {
  return <T extends EventType>(type: T, payload: PayloadInputFor<T>, overrides: Partial<EventFields> = {}): TypedEvent<T> =>
    createEvent(type, payload, { ...defaults, ...overrides });
}

/** Returns a copy of `event` one level deeper (for events a sub-agent emits). */
export function childEvent<E extends { depth: number }>(event: E): E {
  return { ...event, depth: event.depth + 1 };
}
