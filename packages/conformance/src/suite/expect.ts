/** Assertions over raw JSON-RPC responses and the "nothing comes back" checks. */
import type { AhpClient } from "@ahp/core";
import { expect } from "vitest";
import type { ConformanceHarness, RawChannel, RawFrame } from "../types.js";
import { isRecord, isResponseTo, type WireClient, type WireMessage } from "../wire.js";
import { queryParams, request } from "../fixtures.js";
import { CONFORMANCE_QUERY } from "../server.js";
import type { ConformanceRecord, LogWait } from "../log.js";
import type { SuiteEnv } from "./env.js";

/** The harness's records for the client's own session, read over the client's connection. */
export async function clientLog(env: SuiteEnv, client: AhpClient, wait: Omit<LogWait, "session_id"> = {}): Promise<ConformanceRecord[]> {
  const response = await client.query(CONFORMANCE_QUERY.log, {
    session_id: client.sessionId,
    timeout_ms: Math.floor(env.timeoutMs / 2),
    ...wait,
  });
  return (response.answer as { records: ConformanceRecord[] }).records;
}

export type MessageCheck = string | { prefix?: string; contains?: readonly string[]; exact?: string };

/** Asserts one well-formed JSON-RPC error response and returns its error object. */
export function expectError(response: unknown, id: unknown, code: number, message: MessageCheck): { code: number; message: string } {
  expect(isRecord(response), `response is an object: ${JSON.stringify(response)}`).toBe(true);
  const r = response as WireMessage;
  expect(r.jsonrpc).toBe("2.0");
  expect(r.id).toStrictEqual(id);
  expect(r, "an error response carries no result").not.toHaveProperty("result");
  expect(isRecord(r.error), `error member: ${JSON.stringify(r)}`).toBe(true);
  const error = r.error as { code: number; message: string };
  expect(error.code, `error code of ${JSON.stringify(r)}`).toBe(code);
  expect(typeof error.message).toBe("string");
  checkMessage(error.message, message);
  return error;
}

export function checkMessage(text: string, message: MessageCheck): void {
  if (typeof message === "string") {
    expect(text).toBe(message);
    return;
  }
  if (message.exact !== undefined) expect(text).toBe(message.exact);
  if (message.prefix !== undefined) expect(text.startsWith(message.prefix), `"${text}" starts with "${message.prefix}"`).toBe(true);
  for (const part of message.contains ?? []) expect(text).toContain(part);
}

/** Asserts one well-formed success response and returns its result. */
export function expectResult(response: unknown, id: unknown): unknown {
  expect(isRecord(response), `response is an object: ${JSON.stringify(response)}`).toBe(true);
  const r = response as WireMessage;
  expect(r.jsonrpc).toBe("2.0");
  expect(r.id).toStrictEqual(id);
  expect(r, `a success response carries no error: ${JSON.stringify(r)}`).not.toHaveProperty("error");
  expect(r).toHaveProperty("result");
  expect(r.result, "result is never null").not.toBeNull();
  return r.result;
}

/** Parses a raw frame as JSON (fails the test with the text when it is not JSON). */
export function frameJson(frame: RawFrame | undefined, what = "a frame"): WireMessage {
  expect(frame, `expected ${what}`).toBeDefined();
  let value: unknown;
  try {
    value = JSON.parse(frame!.text);
  } catch {
    throw new Error(`${what} is not JSON: ${JSON.stringify(frame!.text.slice(0, 200))}`);
  }
  expect(isRecord(value), `${what} is a JSON object`).toBe(true);
  return value as WireMessage;
}

/** Sends one raw frame and returns the next frame received. */
export async function rawExchange(env: SuiteEnv, raw: RawChannel, text: string): Promise<RawFrame | undefined> {
  await raw.send(text);
  return raw.next(env.timeoutMs);
}

/**
 * Stream transports: sends a sentinel request through the raw channel and asserts that the next
 * frame is its answer, i.e. that nothing was sent back for what was written before.
 */
export async function expectRawSilence(env: SuiteEnv, raw: RawChannel, sessionId: string): Promise<void> {
  const id = `sentinel-${sessionId}`;
  await raw.send(JSON.stringify(request(id, "ahp/query", queryParams(sessionId, CONFORMANCE_QUERY.log, { session_id: sessionId }))));
  const frame = await raw.next(env.timeoutMs);
  const value = frameJson(frame, "the answer to the sentinel request");
  expect(value.id, `expected only the sentinel's answer, got ${frame?.text.slice(0, 300)}`).toBe(id);
}

export type NotificationOutcome = "accepted" | "rejected" | "ignored";

/**
 * Sends a message that must not be answered and checks what the transport did:
 * - stream: nothing comes back before the answer to a following `conformance/log` query on the
 *   same connection; a `rejected` one is reported through the server's `onerror` (checked with
 *   `reason`);
 * - http: through the raw channel when there is one: 204 with an empty body for `accepted` and
 *   `ignored`; for `rejected` what `httpRejectedNotification` says (reference: 200 with id `""`
 *   and `-32603 Handler error: …`).
 * `wire` must be the connection whose `log()` is read afterwards (on stdio every connection is its
 * own harness process). Returns it.
 */
export async function sendUnanswered(
  env: SuiteEnv,
  harness: ConformanceHarness,
  wire: WireClient,
  sessionId: string,
  message: unknown,
  outcome: NotificationOutcome,
  reason?: MessageCheck,
): Promise<WireClient> {
  if (env.kind === "http") {
    if (harness.connectRaw === undefined) {
      await wire.send(message);
      return wire;
    }
    const raw = await harness.connectRaw();
    env.defer(() => raw.close());
    const frame = await rawExchange(env, raw, JSON.stringify(message));
    expect(frame, "an HTTP answer").toBeDefined();
    if (outcome === "rejected" && (env.options.httpRejectedNotification ?? "reference") === "reference") {
      expect(frame!.status).toBe(200);
      const body = frameJson(frame, "the HTTP body");
      const error = expectError(body, "", -32603, { prefix: "Handler error:" });
      if (reason !== undefined) checkMessage(error.message, reason);
    } else {
      expect(frame!.status, `HTTP status for a ${outcome} notification`).toBe(204);
      expect(frame!.text).toBe("");
    }
    return wire;
  }
  const before = outcome === "rejected" ? (await wire.errors()).last : 0;
  const mark = wire.mark();
  await wire.send(message);
  // The answer to this query marks the point by which anything sent back would have arrived.
  const sentinel = wire.id("sentinel");
  await wire.call(request(sentinel, "ahp/query", queryParams(sessionId, CONFORMANCE_QUERY.log, { session_id: sessionId })));
  const unexpected = wire.since(mark).filter((m) => !isResponseTo(sentinel)(m));
  expect(unexpected, "nothing is sent back").toEqual([]);
  if (outcome === "rejected") {
    const { errors } = await wire.errors(before);
    const rejections = errors.filter((e) => e.message.startsWith("Handler error:"));
    expect(rejections.length, `the server reported the rejection (${JSON.stringify(errors)})`).toBeGreaterThan(0);
    if (reason !== undefined) {
      const texts = rejections.map((e) => e.message);
      expect(
        texts.some((t) => {
          try {
            checkMessage(t, reason);
            return true;
          } catch {
            return false;
          }
        }),
        `a rejection matching ${JSON.stringify(reason)} among ${JSON.stringify(texts)}`,
      ).toBe(true);
    }
  }
  return wire;
}

/** A response (to `id`) must not arrive: checks `received` after a sentinel round trip. */
export function responsesTo(wire: WireClient, id: unknown, from = 0): unknown[] {
  return wire.since(from).filter(isResponseTo(id));
}
